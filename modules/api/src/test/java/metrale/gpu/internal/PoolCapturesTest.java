// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicReference;
import metrale.gpu.CaptureMode;
import org.junit.jupiter.api.Test;

/** Which live capture forbids the calling thread what cuMemAlloc and cuMemFree refuse. */
class PoolCapturesTest {

    private final PoolCaptures captures = new PoolCaptures();

    private String fromAnotherThread() throws InterruptedException {
        AtomicReference<String> out = new AtomicReference<>("unset");
        Thread t = Thread.ofPlatform().name("other").start(() -> out.set(captures.forbidding()));
        t.join();
        return out.get();
    }

    @Test
    void noCaptureForbidsNothing() {
        assertThat(captures.any()).isFalse();
        assertThat(captures.forbidding()).isNull();
        captures.ended(7);
        assertThat(captures.any()).isFalse();
    }

    @Test
    void aGlobalCaptureForbidsEveryThread() throws InterruptedException {
        captures.began(7, "Stream[7]", CaptureMode.GLOBAL.code());
        assertThat(captures.any()).isTrue();
        String me = Thread.currentThread().getName();
        assertThat(captures.forbidding()).isEqualTo("Stream[7] is capturing in GLOBAL mode (begun on thread \"" + me + "\")");
        assertThat(fromAnotherThread()).startsWith("Stream[7] is capturing in GLOBAL mode");
        captures.ended(7);
        assertThat(captures.any()).isFalse();
        assertThat(captures.forbidding()).isNull();
    }

    @Test
    void aThreadLocalCaptureForbidsOnlyItsThread() throws InterruptedException {
        captures.began(8, "Stream[8]", CaptureMode.THREAD_LOCAL.code());
        assertThat(captures.forbidding()).contains("Stream[8] is capturing in THREAD_LOCAL mode");
        assertThat(fromAnotherThread()).isNull();
    }

    @Test
    void aRelaxedCaptureForbidsNothingButCounts() throws InterruptedException {
        captures.began(9, "Stream[9]", CaptureMode.RELAXED.code());
        assertThat(captures.any()).isTrue();
        assertThat(captures.forbidding()).isNull();
        captures.began(10, "Stream[10]", CaptureMode.GLOBAL.code());
        assertThat(fromAnotherThread()).startsWith("Stream[10]");
        captures.ended(10);
        assertThat(captures.any()).as("the relaxed one is still live").isTrue();
        assertThat(captures.forbidding()).isNull();
        captures.ended(11);
        captures.ended(9);
        assertThat(captures.any()).isFalse();
    }
}
