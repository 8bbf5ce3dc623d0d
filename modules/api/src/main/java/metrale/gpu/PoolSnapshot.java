// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

import java.util.List;
import java.util.Locale;

/**
 * A memory pool at one moment: its chunks with their blocks, and the history of its recent
 * allocations and frees with the reserved and allocated bytes after each, for a plot over time.
 *
 * @param kind    {@code caching} or {@code cuda}
 * @param stats   the counters at the moment of the snapshot
 * @param chunks  the chunks held from the driver, by address (none for {@code cuda}, whose chunks CUDA keeps)
 * @param history the most recent events, oldest first; at most {@link #HISTORY} of them
 */
public record PoolSnapshot(String kind, PoolStats stats, List<Chunk> chunks, List<Event> history) {

    /** The most events a snapshot's history holds. */
    public static final int HISTORY = 8192;

    /** Copies the lists. */
    public PoolSnapshot {
        chunks = List.copyOf(chunks);
        history = List.copyOf(history);
    }

    /**
     * One chunk from the driver.
     *
     * @param base   its address
     * @param bytes  its size
     * @param stream the stream it was first allocated for (a driver stream handle)
     * @param blocks its blocks, by address; together they cover the chunk
     */
    public record Chunk(long base, long bytes, long stream, List<Block> blocks) {

        /** Copies the list. */
        public Chunk {
            blocks = List.copyOf(blocks);
        }
    }

    /**
     * One block of a chunk.
     *
     * @param ptr       its address
     * @param bytes     its size
     * @param allocated whether it is live
     * @param requested for a live block, the bytes its caller asked for (pad included); else 0
     * @param site      for a live block, where it was allocated; else the empty string
     * @param index     for a live block, its creation index; else -1
     * @param stream    the stream it belongs to (live) or was freed on (free)
     */
    public record Block(long ptr, long bytes, boolean allocated, long requested, String site, long index, long stream) {
    }

    /**
     * One allocation, free, chunk allocation or chunk release.
     *
     * @param nanos     nanoseconds since the pool was created
     * @param action    {@code alloc}, {@code free}, {@code chunk_alloc}, {@code chunk_free} or {@code oom}
     * @param ptr       the block's or chunk's address (0 for {@code oom})
     * @param bytes     its size
     * @param stream    the stream (a driver stream handle)
     * @param site      the call site, or the empty string
     * @param reserved  the pool's reserved bytes after it
     * @param allocated the pool's allocated bytes after it
     */
    public record Event(long nanos, String action, long ptr, long bytes, long stream, String site,
                        long reserved, long allocated) {
    }

    /** {@return the snapshot as one JSON object: {@code kind}, {@code stats}, {@code chunks}, {@code history}} */
    public String toJson() {
        StringBuilder sb = new StringBuilder(256 + 160 * history.size());
        PoolStats s = stats;
        sb.append("{\"kind\":").append(str(kind)).append(",\"stats\":{");
        sb.append("\"reservedBytes\":").append(s.reservedBytes())
                .append(",\"allocatedBytes\":").append(s.allocatedBytes())
                .append(",\"requestedBytes\":").append(s.requestedBytes())
                .append(",\"peakReservedBytes\":").append(s.peakReservedBytes())
                .append(",\"peakAllocatedBytes\":").append(s.peakAllocatedBytes())
                .append(",\"cachedBytes\":").append(s.cachedBytes())
                .append(",\"largestCachedBlock\":").append(s.largestCachedBlock())
                .append(",\"fragmentation\":").append(String.format(Locale.ROOT, "%.6f", s.fragmentation()))
                .append(",\"liveBlocks\":").append(s.liveBlocks())
                .append(",\"chunks\":").append(s.chunks())
                .append(",\"allocs\":").append(s.allocs())
                .append(",\"hits\":").append(s.hits())
                .append(",\"driverAllocs\":").append(s.driverAllocs())
                .append(",\"driverFrees\":").append(s.driverFrees())
                .append(",\"cacheFlushes\":").append(s.cacheFlushes())
                .append(",\"bySite\":{");
        boolean first = true;
        for (var e : s.bySite().entrySet().stream().sorted(java.util.Map.Entry.comparingByKey()).toList()) {
            sb.append(first ? "" : ",").append(str(e.getKey())).append(':').append(e.getValue());
            first = false;
        }
        sb.append("}},\"chunks\":[");
        for (int i = 0; i < chunks.size(); i++) {
            Chunk c = chunks.get(i);
            sb.append(i == 0 ? "" : ",").append("{\"base\":").append(hex(c.base())).append(",\"bytes\":").append(c.bytes())
                    .append(",\"stream\":").append(hex(c.stream())).append(",\"blocks\":[");
            for (int j = 0; j < c.blocks().size(); j++) {
                Block b = c.blocks().get(j);
                sb.append(j == 0 ? "" : ",").append("{\"ptr\":").append(hex(b.ptr())).append(",\"bytes\":").append(b.bytes())
                        .append(",\"allocated\":").append(b.allocated()).append(",\"requested\":").append(b.requested())
                        .append(",\"site\":").append(str(b.site())).append(",\"index\":").append(b.index())
                        .append(",\"stream\":").append(hex(b.stream())).append('}');
            }
            sb.append("]}");
        }
        sb.append("],\"history\":[");
        for (int i = 0; i < history.size(); i++) {
            Event e = history.get(i);
            sb.append(i == 0 ? "" : ",").append("{\"nanos\":").append(e.nanos()).append(",\"action\":").append(str(e.action()))
                    .append(",\"ptr\":").append(hex(e.ptr())).append(",\"bytes\":").append(e.bytes())
                    .append(",\"stream\":").append(hex(e.stream())).append(",\"site\":").append(str(e.site()))
                    .append(",\"reserved\":").append(e.reserved()).append(",\"allocated\":").append(e.allocated()).append('}');
        }
        return sb.append("]}").toString();
    }

    /**
     * {@return a self-contained SVG page: reserved and allocated bytes over the history (x: event
     * number, y: MiB), with the chunk map below (one bar per chunk, live blocks filled by site)}
     */
    public String toSvg() {
        int w = 900;
        int plotH = 300;
        int left = 70;
        int right = 20;
        int top = 40;
        int barH = 14;
        int mapTop = top + plotH + 50;
        int h = mapTop + Math.max(1, chunks.size()) * (barH + 6) + 40;
        long max = 1;
        for (Event e : history) {
            max = Math.max(max, Math.max(e.reserved(), e.allocated()));
        }
        max = Math.max(max, stats.peakReservedBytes());
        double mib = max / (1024.0 * 1024.0);
        int n = Math.max(1, history.size() - 1);
        double pw = w - left - right;
        StringBuilder sb = new StringBuilder();
        sb.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(w).append("\" height=\"").append(h)
                .append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
        sb.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"20\" font-size=\"14\">%s pool: %d event(s), "
                        + "reserved %.1f MiB (peak %.1f), allocated %.1f MiB (peak %.1f), %d driver alloc(s)</text>%n",
                left, esc(kind), history.size(), m(stats.reservedBytes()), m(stats.peakReservedBytes()),
                m(stats.allocatedBytes()), m(stats.peakAllocatedBytes()), stats.driverAllocs()));
        sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n",
                left, top + plotH, w - right, top + plotH));
        sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n",
                left, top, left, top + plotH));
        for (int t = 0; t <= 4; t++) {
            double y = top + plotH - plotH * t / 4.0;
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f MiB</text>%n",
                    left - 4, y + 4, mib * t / 4.0));
        }
        sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">event</text>%n",
                left + pw / 2, top + plotH + 30));
        for (int series = 0; series < 2; series++) {
            StringBuilder pts = new StringBuilder();
            double prevY = top + plotH;
            for (int i = 0; i < history.size(); i++) {
                Event e = history.get(i);
                double x = left + pw * i / n;
                double y = top + plotH - plotH * (double) (series == 0 ? e.reserved() : e.allocated()) / max;
                // A step plot: the value holds until the next event.
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f %.1f,%.1f ", x, prevY, x, y));
                prevY = y;
            }
            sb.append("<polyline fill=\"none\" stroke=\"").append(series == 0 ? "#c0392b" : "#2471a3")
                    .append("\" stroke-width=\"1.5\" points=\"").append(pts.toString().trim()).append("\"/>\n");
        }
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#c0392b\">reserved</text>"
                + "<text x=\"%d\" y=\"%d\" fill=\"#2471a3\">allocated</text>%n", w - 160, top + 12, w - 90, top + 12));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">chunks (grey: cached, blue: live blocks)</text>%n",
                left, mapTop - 8));
        long biggest = 1;
        for (Chunk c : chunks) {
            biggest = Math.max(biggest, c.bytes());
        }
        for (int i = 0; i < chunks.size(); i++) {
            Chunk c = chunks.get(i);
            double y = mapTop + i * (barH + 6);
            double cw = pw * c.bytes() / biggest;
            sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#ddd\">"
                    + "<title>chunk 0x%x, %d B</title></rect>%n", left, y, cw, barH, c.base(), c.bytes()));
            for (Block b : c.blocks()) {
                if (!b.allocated()) {
                    continue;
                }
                double bx = left + cw * (b.ptr() - c.base()) / c.bytes();
                double bw = Math.max(0.5, cw * b.bytes() / c.bytes());
                sb.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#2471a3\" "
                        + "stroke=\"white\" stroke-width=\"0.3\"><title>0x%x, %d B (#%d) at %s</title></rect>%n",
                        bx, y, bw, barH, b.ptr(), b.bytes(), b.index(), esc(b.site())));
            }
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f MiB</text>%n",
                    left - 4, y + barH - 3, m(c.bytes())));
        }
        return sb.append("</svg>\n").toString();
    }

    private static double m(long bytes) {
        return bytes / (1024.0 * 1024.0);
    }

    private static String hex(long v) {
        return "\"0x" + Long.toHexString(v) + "\"";
    }

    private static String str(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
