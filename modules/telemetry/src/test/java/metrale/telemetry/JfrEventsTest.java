// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import jdk.jfr.DataAmount;
import jdk.jfr.EventType;
import jdk.jfr.MemoryAddress;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JfrEventsTest {

    @Test
    void eventsAreRecordedWithTheirFields(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("gpu.jfr");
        try (Recording recording = new Recording()) {
            recording.enable(GpuLaunchEvent.class);
            recording.enable(GpuAllocEvent.class);
            recording.enable(GpuFreeEvent.class);
            recording.enable(GpuCopyEvent.class);
            recording.enable(GpuSyncEvent.class);
            recording.start();

            GpuLaunchEvent launch = new GpuLaunchEvent();
            launch.begin();
            assertThat(launch.shouldCommit()).isTrue();
            launch.kernel = "m::k";
            launch.function = 0xf00;
            launch.gridX = 1;
            launch.gridY = 2;
            launch.gridZ = 3;
            launch.blockX = 4;
            launch.blockY = 5;
            launch.blockZ = 6;
            launch.sharedMemBytes = 1024;
            launch.stream = 0x5;
            launch.commit();

            GpuAllocEvent alloc = new GpuAllocEvent();
            alloc.address = 0x7000;
            alloc.bytes = 4096;
            alloc.site = "App.java:12";
            alloc.managed = true;
            alloc.commit();

            GpuFreeEvent free = new GpuFreeEvent();
            free.address = 0x7000;
            free.bytes = 4096;
            free.commit();

            GpuCopyEvent copy = new GpuCopyEvent();
            copy.direction = "D2H";
            copy.bytes = 64;
            copy.async = true;
            copy.stream = 0x5;
            copy.commit();

            GpuSyncEvent sync = new GpuSyncEvent();
            sync.stream = 0x5;
            sync.what = "stream";
            sync.commit();

            recording.stop();
            recording.dump(file);
        }

        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().startsWith("metrale."))
                .toList();
        Map<String, RecordedEvent> byName = events.stream()
                .collect(Collectors.toMap(e -> e.getEventType().getName(), Function.identity()));
        assertThat(byName).containsOnlyKeys("metrale.Launch", "metrale.Alloc", "metrale.Free",
                "metrale.Copy", "metrale.Sync");

        RecordedEvent l = byName.get("metrale.Launch");
        assertThat(l.getString("kernel")).isEqualTo("m::k");
        assertThat(l.getLong("function")).isEqualTo(0xf00);
        assertThat(List.of(l.getInt("gridX"), l.getInt("gridY"), l.getInt("gridZ"),
                l.getInt("blockX"), l.getInt("blockY"), l.getInt("blockZ"))).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(l.getInt("sharedMemBytes")).isEqualTo(1024);
        assertThat(l.getLong("stream")).isEqualTo(5);
        assertThat(l.getStackTrace()).as("launches carry their stack").isNotNull();
        assertThat(l.getEventType().getCategoryNames()).containsExactly("metrale", "GPU");
        assertThat(l.getEventType().getLabel()).isEqualTo("GPU Kernel Launch");

        RecordedEvent a = byName.get("metrale.Alloc");
        assertThat(a.getLong("address")).isEqualTo(0x7000);
        assertThat(a.getLong("bytes")).isEqualTo(4096);
        assertThat(a.getString("site")).isEqualTo("App.java:12");
        assertThat(a.getBoolean("managed")).isTrue();
        assertThat(a.getStackTrace()).as("allocations carry their stack").isNotNull();

        RecordedEvent f = byName.get("metrale.Free");
        assertThat(f.getLong("address")).isEqualTo(0x7000);
        assertThat(f.getLong("bytes")).isEqualTo(4096);

        RecordedEvent c = byName.get("metrale.Copy");
        assertThat(c.getString("direction")).isEqualTo("D2H");
        assertThat(c.getLong("bytes")).isEqualTo(64);
        assertThat(c.getBoolean("async")).isTrue();
        assertThat(c.getLong("stream")).isEqualTo(5);

        RecordedEvent s = byName.get("metrale.Sync");
        assertThat(s.getLong("stream")).isEqualTo(5);
        assertThat(s.getString("what")).isEqualTo("stream");
        assertThat(s.getStackTrace()).as("syncs carry their stack").isNotNull();
        assertThat(c.getStackTrace()).as("copies carry their stack").isNotNull();
    }

    @Test
    void fieldsCarryTheirContentTypes() {
        EventType alloc = EventType.getEventType(GpuAllocEvent.class);
        assertThat(alloc.getField("bytes").getContentType()).isEqualTo(DataAmount.class.getName());
        assertThat(alloc.getField("address").getContentType()).isEqualTo(MemoryAddress.class.getName());
        EventType launch = EventType.getEventType(GpuLaunchEvent.class);
        assertThat(launch.getField("sharedMemBytes").getContentType()).isEqualTo(DataAmount.class.getName());
        for (Class<? extends jdk.jfr.Event> type : List.of(GpuLaunchEvent.class, GpuAllocEvent.class,
                GpuFreeEvent.class, GpuCopyEvent.class, GpuSyncEvent.class, GpuGraphLaunchEvent.class)) {
            EventType t = EventType.getEventType(type);
            assertThat(t.getCategoryNames()).containsExactly("metrale", "GPU");
            assertThat(t.getDescription()).isNotBlank();
        }
    }
}
