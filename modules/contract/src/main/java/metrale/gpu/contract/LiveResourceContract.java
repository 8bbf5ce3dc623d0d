// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.List;
import metrale.gpu.CapturedStep;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GpuException;
import metrale.gpu.GraphHandle;
import metrale.gpu.LeakDetection;
import metrale.gpu.LiveResource;
import metrale.gpu.LiveResource.Kind;
import metrale.gpu.StepOptions;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@link Gpu#liveResources()}: every resource a runtime creates besides device memory is listed
 * from its creation to its release, with its kind, its handle's text and the creation site; the
 * default streams never are; after close the list is what close found still live.
 */
public abstract class LiveResourceContract extends GpuContract {

    /** Creates the contract; subclasses are instantiated by JUnit. */
    protected LiveResourceContract() {
    }

    private static int line() {
        return StackWalker.getInstance().walk(s -> s.skip(1).findFirst()).orElseThrow().getLineNumber();
    }

    private static String site(int line) {
        return "LiveResourceContract.java:" + line;
    }

    @Test
    void eachKindIsListedWithItsHandleAndSiteUntilItIsReleased() {
        reopen(b -> b.leakDetection(LeakDetection.ALL));
        assertThat(gpu.liveResources()).as("a fresh runtime, its default streams included").isEmpty();

        int streamLine = line(); Stream s = gpu.createStream(true);
        int eventLine = line(); Event e = gpu.createEvent();
        int pinnedLine = line(); MemorySegment host = gpu.allocHostPinned(4096);
        DevicePtr p = gpu.alloc(256);
        gpu.beginCapture(s);
        gpu.memsetAsync(p, 0, 256, s);
        int graphLine = line(); GraphHandle g = gpu.endCapture(s);
        int stepLine = line(); CapturedStep step = gpu.capturedStep("resources", (gg, st) -> gg.memsetAsync(p, 1, 256, st),
                StepOptions.defaults());

        assertThat(gpu.liveResources()).containsExactly(
                new LiveResource(Kind.STREAM, s.toString(), site(streamLine)),
                new LiveResource(Kind.EVENT, e.toString(), site(eventLine)),
                new LiveResource(Kind.PINNED_HOST, "0x" + Long.toHexString(host.address()) + " (4096 B)", site(pinnedLine)),
                new LiveResource(Kind.GRAPH, g.toString(), site(graphLine)),
                new LiveResource(Kind.CAPTURED_STEP, "'resources'", site(stepLine)));
        assertThat(gpu.liveResources().getFirst()).hasToString("stream " + s + " created at " + site(streamLine));

        step.close();
        gpu.destroyGraph(g);
        gpu.freeHostPinned(host);
        gpu.destroyEvent(e);
        assertThat(gpu.liveResources()).extracting(LiveResource::kind).containsExactly(Kind.STREAM);
        gpu.destroyStream(s);
        gpu.free(p);
        assertThat(gpu.liveResources()).isEmpty();
    }

    @Test
    void aRefusedReleaseKeepsTheListAsItWas() {
        Stream s = gpu.createStream();
        gpu.destroyStream(s);
        Event e = gpu.createEvent();
        assertThatThrownBy(() -> gpu.destroyStream(s)).isInstanceOf(GpuException.class);
        assertThatThrownBy(() -> gpu.destroyStream(gpu.defaultStream())).isInstanceOf(GpuException.class);
        assertThatThrownBy(() -> gpu.freeHostPinned(MemorySegment.ofAddress(4096))).isInstanceOf(GpuException.class);
        assertThat(gpu.liveResources()).extracting(LiveResource::handle).containsExactly(e.toString());
        gpu.destroyEvent(e);
        assertThat(gpu.liveResources()).isEmpty();
    }

    @Test
    void afterCloseTheListIsWhatCloseFoundAndReleased() {
        reopen(b -> b.leakDetection(LeakDetection.ALL));
        Stream kept = gpu.createStream();
        Stream freed = gpu.createStream();
        int line = line(); Event leaked = gpu.createEvent();
        gpu.destroyStream(freed);
        Gpu closed = gpu;
        closed.close();
        List<LiveResource> atClose = closed.liveResources();
        assertThat(atClose).containsExactly(
                new LiveResource(Kind.STREAM, kept.toString(), atClose.getFirst().site()),
                new LiveResource(Kind.EVENT, leaked.toString(), site(line)));
        assertThat(closed.liveResources()).as("read again").isEqualTo(atClose);
        assertBackendReleased(closed);
    }
}
