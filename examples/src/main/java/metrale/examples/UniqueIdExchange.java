// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.GpuBuilder;
import metrale.gpu.Stream;
import metrale.gpu.nccl.Collectives;
import metrale.gpu.nccl.Communicator;
import metrale.gpu.nccl.NcclDataType;
import metrale.gpu.nccl.NcclRedOp;
import metrale.gpu.nccl.NcclUniqueId;

/**
 * Ranks in separate JVMs meeting through a file: rank 0 makes the NCCL unique id and writes it
 * (atomically, by rename) to a path every rank was given; the other ranks wait for the file,
 * read the id and join. Each rank then all-reduces its rank + 1 and checks the sum.
 *
 * <pre>
 * java ... metrale.examples.UniqueIdExchange --rank 0 --ranks 2 --file /tmp/nccl.id --device 0 &amp;
 * java ... metrale.examples.UniqueIdExchange --rank 1 --ranks 2 --file /tmp/nccl.id --device 1
 * </pre>
 *
 * <p>NCCL needs one GPU per rank; on a one-GPU machine run {@code --ranks 1}. The simulator's
 * communicator lives in one JVM, so there the ranks are threads of one process (the test does so).
 */
public final class UniqueIdExchange {

    private UniqueIdExchange() {
    }

    /**
     * Publishes {@code id} at {@code file} so that no reader ever sees half of it.
     *
     * @param id   the id
     * @param file the agreed path
     */
    public static void publish(NcclUniqueId id, Path file) {
        try {
            Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), "nccl", ".id.tmp");
            Files.writeString(tmp, id.toHex(), StandardCharsets.US_ASCII);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("writing the NCCL id to " + file, e);
        }
    }

    /**
     * {@return the id at {@code file}, waiting for it to appear}
     *
     * @param file    the agreed path
     * @param timeout how long to wait
     */
    public static NcclUniqueId await(Path file, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(file)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no NCCL id at " + file + " after " + timeout + ": did rank 0 start?");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for " + file, e);
            }
        }
        try {
            return NcclUniqueId.fromHex(Files.readString(file, StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException("reading the NCCL id from " + file, e);
        }
    }

    /**
     * One rank: exchange the id through {@code file}, join, all-reduce rank + 1.
     *
     * @param builder the rank's runtime
     * @param rank    this rank
     * @param ranks   the rank count
     * @param file    the agreed path
     * @return the sum every rank received (ranks * (ranks + 1) / 2 when all is well)
     */
    public static float runRank(GpuBuilder builder, int rank, int ranks, Path file) {
        try (Gpu gpu = builder.open()) {
            NcclUniqueId id;
            if (rank == 0) {
                id = Collectives.uniqueId(gpu);
                publish(id, file);
            } else {
                id = await(file, Collectives.timeout());
            }
            DevicePtr buf = gpu.alloc(4);
            try (Communicator c = Collectives.initRank(gpu, ranks, id, rank)) {
                gpu.copyH2D(new float[] {rank + 1}, buf);
                c.allReduce(buf, buf, 1, NcclDataType.FLOAT32, NcclRedOp.SUM, Stream.DEFAULT);
                gpu.synchronize(Stream.DEFAULT);
                float[] out = new float[1];
                gpu.copyD2H(buf, out);
                return out[0];
            } finally {
                gpu.free(buf);
            }
        }
    }

    /**
     * Runs one rank.
     *
     * @param argv {@code --rank R --ranks N --file PATH [--device D] [--backend cuda|sim]}
     */
    public static void main(String[] argv) {
        int rank = 0;
        int ranks = 1;
        int device = 0;
        String backend = "cuda";
        Path file = null;
        for (int i = 0; i + 1 < argv.length; i += 2) {
            switch (argv[i]) {
                case "--rank" -> rank = Integer.parseInt(argv[i + 1]);
                case "--ranks" -> ranks = Integer.parseInt(argv[i + 1]);
                case "--device" -> device = Integer.parseInt(argv[i + 1]);
                case "--backend" -> backend = argv[i + 1];
                case "--file" -> file = Path.of(argv[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + argv[i]);
            }
        }
        if (file == null) {
            throw new IllegalArgumentException("--file PATH is required: the path every rank shares");
        }
        float sum = runRank(Gpu.builder().backend(backend).device(device), rank, ranks, file);
        float want = ranks * (ranks + 1) / 2.0f;
        System.out.printf("rank %d of %d: all-reduce gave %.1f, expected %.1f: %s%n", rank, ranks, sum, want,
                sum == want ? "OK" : "MISMATCH");
        if (sum != want) {
            System.exit(1);
        }
    }
}
