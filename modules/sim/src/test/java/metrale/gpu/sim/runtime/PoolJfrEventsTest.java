// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.runtime;

import static metrale.gpu.sim.runtime.RuntimeTestSupport.here;
import static metrale.gpu.sim.runtime.RuntimeTestSupport.sim;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pool blocks are JFR allocation and free events like driver allocations, with their sites. */
class PoolJfrEventsTest {

    @Test
    void poolAllocAndFreeAreRecorded(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("pool.jfr");
        DevicePtr first;
        DevicePtr second;
        String site;
        try (Recording rec = new Recording(); Gpu gpu = sim().allocator("caching").quarantineBytes(0).open()) {
            rec.enable("metrale.Alloc");
            rec.enable("metrale.Free");
            rec.start();
            Stream s = gpu.createStream();
            first = gpu.pool().alloc(3000, s); site = here();
            gpu.pool().free(first, s);
            second = gpu.alloc(3000);
            gpu.free(second);
            rec.stop();
            rec.dump(file);
            gpu.destroyStream(s);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Alloc")).hasSize(2)
                .first().satisfies(e -> {
                    assertThat(e.getLong("address")).isEqualTo(first.address());
                    assertThat(e.getLong("bytes")).isEqualTo(3000);
                    assertThat(e.getString("site")).isEqualTo(site);
                });
        assertThat(events).filteredOn(e -> e.getEventType().getName().equals("metrale.Free")).hasSize(2)
                .allSatisfy(e -> assertThat(e.getLong("bytes")).isEqualTo(3000));
    }
}
