package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
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
        try (Recording rec = new Recording(); Gpu gpu = sim().open(); KernelArgs args = new KernelArgs()) {
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
}
