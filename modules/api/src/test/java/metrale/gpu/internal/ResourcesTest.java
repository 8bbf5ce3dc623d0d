// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import metrale.gpu.CapturedStep;
import metrale.gpu.Event;
import metrale.gpu.GraphHandle;
import metrale.gpu.LiveResource;
import metrale.gpu.LiveResource.Kind;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/** The inventory of streams, events, graphs, pinned memory, steps and other modules' resources. */
class ResourcesTest {

    private final AtomicInteger site = new AtomicInteger();
    private final Resources res = new Resources(() -> "S" + site.incrementAndGet());

    @Test
    void resourcesAreListedOldestFirstWithTheirSites() {
        Stream s = res.stream(new Stream(40));
        Event e = res.event(new Event(41));
        GraphHandle g = res.graph(new GraphHandle(42));
        assertThat(s.handle()).isEqualTo(40);
        assertThat(e.handle()).isEqualTo(41);
        assertThat(g.handle()).isEqualTo(42);
        Runnable release = res.other(Kind.STREAM, "comm 7");
        assertThat(res.list()).containsExactly(new LiveResource(Kind.STREAM, s.toString(), "S1"),
                new LiveResource(Kind.EVENT, e.toString(), "S2"), new LiveResource(Kind.GRAPH, g.toString(), "S3"),
                new LiveResource(Kind.STREAM, "comm 7", "S4"));
        release.run();
        assertThat(res.list()).hasSize(3);
    }

    @Test
    void aHandleIsForgottenByKindAndValueAndCanBeRestored() {
        res.stream(new Stream(40));
        res.event(new Event(40));
        Resources.Entry gone = res.gone(Kind.STREAM, 40);
        assertThat(gone).isNotNull();
        assertThat(gone.resource().kind()).isEqualTo(Kind.STREAM);
        assertThat(res.gone(Kind.STREAM, 40)).isNull();
        assertThat(res.list()).extracting(LiveResource::kind).containsExactly(Kind.EVENT);
        res.restore(Kind.STREAM, 40, gone);
        assertThat(res.list()).extracting(LiveResource::kind).containsExactly(Kind.STREAM, Kind.EVENT);
        res.restore(Kind.GRAPH, 1, null);
        assertThat(res.list()).hasSize(2);
    }

    @Test
    void pinnedMemoryAndStepsAreNamedByAddressAndName() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment seg = a.allocate(64);
            res.pinned(seg);
            CapturedStep step = (CapturedStep) java.lang.reflect.Proxy.newProxyInstance(CapturedStep.class.getClassLoader(),
                    new Class<?>[] {CapturedStep.class}, (proxy, m, args) -> switch (m.getName()) {
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> null;
                    });
            assertThat(res.step(step, "train")).isSameAs(step);
            assertThat(res.list()).extracting(LiveResource::handle)
                    .containsExactly("0x" + Long.toHexString(seg.address()) + " (64 B)", "'train'");
            res.gone(step);
            assertThat(res.gone(Kind.PINNED_HOST, seg.address())).isNotNull();
            assertThat(res.list()).isEmpty();
        }
        assertThatThrownBy(() -> Resources.pinnedText(null)).isInstanceOf(NullPointerException.class).hasMessage("seg");
    }

    @Test
    void closeTakesAFinalInventoryThatStaysAndForgetsTheRest() {
        res.stream(new Stream(40));
        java.util.List<LiveResource> found = res.close();
        assertThat(found).hasSize(1);
        assertThat(res.close()).isSameAs(found);
        assertThat(res.list()).isSameAs(found);
        Resources.Entry e = res.gone(Kind.STREAM, 40);
        assertThat(e).as("forgotten at close").isNull();
        res.event(new Event(1));
        res.restore(Kind.STREAM, 40, new Resources.Entry(0, found.getFirst()));
        assertThat(res.list()).isSameAs(found);
        res.logAtClose(found);
        res.logAtClose(java.util.List.of());
    }
}
