// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import metrale.gpu.DevicePtr;
import metrale.gpu.Event;
import metrale.gpu.Gpu;
import metrale.gpu.GraphHandle;
import metrale.gpu.KernelArgs;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.sim.SimKernels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runtime emits its JFR events, with their fields filled, while a recording enables them. */
class RuntimeJfrEventsTest {

    private static final String MODULE = "rt_jfr";

    @BeforeAll
    static void kernels() {
        SimKernels.register(MODULE, "noop", l -> {
        });
    }

    @AfterAll
    static void unregister() {
        SimKernels.unregister(MODULE, "noop");
    }

    @Test
    void launchAllocFreeCopyAndSyncAreRecorded(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("gpu.jfr");
        DevicePtr p;
        String site;
        try (Recording rec = new Recording(); Gpu gpu = sim().quarantineBytes(0).open(); KernelArgs args = new KernelArgs()) {
            for (String name : List.of("metrale.Launch", "metrale.Alloc", "metrale.Free", "metrale.Copy", "metrale.Sync")) {
                rec.enable(name);
            }
            rec.start();
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            p = gpu.alloc(512); site = here();
            gpu.copyH2D(new byte[100], p);
            Stream s = gpu.createStream();
            gpu.launch(gpu.kernel(MODULE, "noop"), LaunchConfig.of(3, 64), s, args.clear().ptr(p));
            gpu.synchronize(s);
            gpu.free(p);
            rec.stop();
            rec.dump(file);
            gpu.destroyStream(s);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Alloc")).singleElement()
                .satisfies(e -> {
                    assertThat(e.getLong("address")).isEqualTo(p.address());
                    assertThat(e.getLong("bytes")).isEqualTo(512);
                    assertThat(e.getString("site")).isEqualTo(site);
                    assertThat(e.getBoolean("managed")).isFalse();
                });
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Free")).singleElement()
                .satisfies(e -> assertThat(e.getLong("bytes")).isEqualTo(512));
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Copy")).singleElement()
                .satisfies(e -> {
                    assertThat(e.getString("direction")).isEqualTo("H2D");
                    assertThat(e.getLong("bytes")).isEqualTo(100);
                });
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Launch")).singleElement()
                .satisfies(e -> {
                    assertThat(e.getString("kernel")).isEqualTo(MODULE + "::noop");
                    assertThat(e.getInt("gridX")).isEqualTo(3);
                    assertThat(e.getInt("blockX")).isEqualTo(64);
                });
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Sync"))
                .anySatisfy(e -> assertThat(e.getString("what")).isEqualTo("stream"));
        assertThat(Files.size(file)).isPositive();
    }

    @Test
    void everyCopyKindAllocKindAndSyncKindIsRecorded(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("kinds.jfr");
        try (Recording rec = new Recording(); Gpu gpu = sim().quarantineBytes(0).open()) {
            for (String name : List.of("metrale.Alloc", "metrale.Free", "metrale.Copy", "metrale.Sync")) {
                rec.enable(name);
            }
            DevicePtr p = gpu.alloc(512);
            DevicePtr q = gpu.alloc(512);
            MemorySegment pinned = gpu.allocHostPinned(4096);
            Stream s = gpu.createStream();
            Event e = gpu.createEvent();
            rec.start();
            gpu.copyH2D(new byte[100], p);
            gpu.copyD2H(p, new byte[101]);
            gpu.copyD2HOnStream(p, MemorySegment.ofArray(new byte[102]), s);
            gpu.copyD2HAsync(p, pinned.asSlice(0, 103), s);
            gpu.copyH2DAsyncRetained(pinned.asSlice(0, 104), p, s);
            gpu.copyD2D(p, q, 105);
            gpu.copyD2DAsync(p, q, 106, s);
            gpu.copyD2D2DAsync(p, 64, q, 64, 32, 4, s);
            DevicePtr m = gpu.allocManaged(256);
            DevicePtr chunk = gpu.allocArena(4096);
            gpu.recordEvent(e, s);
            gpu.eventSynchronize(e);
            gpu.synchronize(s);
            gpu.synchronize();
            gpu.free(m);
            gpu.freeArena(chunk);
            rec.stop();
            rec.dump(file);
            gpu.destroyEvent(e);
            gpu.destroyStream(s);
            gpu.freeHostPinned(pinned);
            gpu.free(p);
            gpu.free(q);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Copy"))
                .extracting(e -> e.getString("direction") + " " + e.getLong("bytes") + (e.getBoolean("async") ? " async" : ""))
                .containsExactlyInAnyOrder("H2D 100", "D2H 101", "D2H 102", "D2H 103 async", "H2D 104 async", "D2D 105",
                        "D2D 106 async", "D2D 128 async");
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Alloc"))
                .extracting(e -> e.getLong("bytes") + (e.getBoolean("managed") ? " managed" : "") + " " + e.getString("site"))
                .hasSize(2).anySatisfy(a -> assertThat(a).startsWith("256 managed "))
                .anySatisfy(a -> assertThat(a).isEqualTo("4096 arena chunk"));
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Free"))
                .extracting(e -> e.getLong("bytes")).containsExactlyInAnyOrder(256L, 4096L);
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Sync"))
                .extracting(e -> e.getString("what")).contains("event", "stream", "context");
    }

    /**
     * Each event brackets its driver call, so it has a duration, and carries the stack of the
     * call: below the runtime's own frames (JFR records from where the event is committed, and
     * the JDK's frame filter is not public) the first frame is the caller's.
     */
    @Test
    void eventsHaveDurationsAndTheCallersStack(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("durations.jfr");
        List<String> names = List.of("metrale.Launch", "metrale.GraphLaunch", "metrale.Alloc", "metrale.Free",
                "metrale.Copy", "metrale.Sync");
        try (Recording rec = new Recording(); Gpu gpu = sim().quarantineBytes(0).open(); KernelArgs args = new KernelArgs()) {
            for (String name : names) {
                rec.enable(name).withStackTrace();
            }
            rec.start();
            gpu.loadModule(MODULE, SimKernels.image(MODULE));
            DevicePtr p = gpu.alloc(4096);
            gpu.copyH2D(new byte[4096], p);
            Stream s = gpu.createStream();
            gpu.launch(gpu.kernel(MODULE, "noop"), LaunchConfig.of(3, 64), s, args.clear().ptr(p));
            gpu.synchronize(s);
            gpu.beginCapture(s);
            gpu.launch(gpu.kernel(MODULE, "noop"), LaunchConfig.of(1, 32), s, args.clear().ptr(p));
            GraphHandle g = gpu.endCapture(s);
            gpu.launchGraph(g, s);
            gpu.synchronize(s);
            gpu.destroyGraph(g);
            gpu.free(p);
            rec.stop();
            rec.dump(file);
            gpu.destroyStream(s);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        for (String name : names) {
            List<RecordedEvent> of = events.stream().filter(e -> e.getEventType().getName().equals(name)).toList();
            assertThat(of).as(name).isNotEmpty();
            for (RecordedEvent e : of) {
                assertThat(e.getDuration()).as(name + " duration").isPositive();
                assertThat(e.getStackTrace()).as(name + " stack trace").isNotNull();
                RecordedFrame top = e.getStackTrace().getFrames().stream()
                        .filter(f -> !isRuntimeFrame(f.getMethod().getType().getName()))
                        .findFirst().orElseThrow();
                assertThat(top.getMethod().getType().getName() + "." + top.getMethod().getName())
                        .as(name + ": the first frame outside the runtime")
                        .isEqualTo(RuntimeJfrEventsTest.class.getName() + ".eventsHaveDurationsAndTheCallersStack");
            }
        }
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.GraphLaunch")).singleElement()
                .satisfies(e -> assertThat(e.getLong("graph")).isNotZero());
    }

    /** The API's classes (package {@code metrale.gpu}, e.g. {@code Gpu}'s default methods) and the core's. */
    private static boolean isRuntimeFrame(String className) {
        String pkg = className.substring(0, className.lastIndexOf('.'));
        return pkg.equals("metrale.gpu") || pkg.equals("metrale.gpu.internal");
    }
}
