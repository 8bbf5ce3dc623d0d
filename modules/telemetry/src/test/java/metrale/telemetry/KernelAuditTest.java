// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class KernelAuditTest {

    private final KernelAudit audit = new Telemetry().audit();

    @Test
    void aggregatesByModuleFuncOutcomeAndSiteInFirstSeenOrder() {
        audit.record("m", "add", true, "A.java:1");
        audit.record("m", "missing", false, "B.java:2");
        audit.record("m", "add", true, "A.java:1");
        audit.record("m", "add", true, "C.java:3");
        audit.record("m", "add", false, "A.java:1");
        assertThat(audit.lookups()).containsExactly(
                new KernelLookup("m", "add", true, "A.java:1", 2),
                new KernelLookup("m", "missing", false, "B.java:2", 1),
                new KernelLookup("m", "add", true, "C.java:3", 1),
                new KernelLookup("m", "add", false, "A.java:1", 1));
    }

    @Test
    void report() {
        audit.record("m", "add", true, "A.java:1");
        audit.record("m", "add", true, "A.java:1");
        audit.record("attn", "softmax", true, "B.java:20");
        audit.record("m", "missing", false, "C.java:3");
        assertThat(audit.report()).isEqualTo("""
                Kernel lookups: 4 in 3 row(s)
                         2  m::add         ok      A.java:1
                         1  attn::softmax  ok      B.java:20
                         1  m::missing     FAILED  C.java:3
                FAILED: 1 lookup(s) in 1 row(s)
                         1  m::missing  C.java:3
                """);
    }

    @Test
    void emptyReportAndClear() {
        audit.record("m", "add", true, "A.java:1");
        audit.clear();
        assertThat(audit.lookups()).isEmpty();
        assertThat(audit.report()).isEqualTo("Kernel lookups: 0 in 0 row(s)\nFAILED: 0 lookup(s) in 0 row(s)\n");
    }

    @Test
    void concurrentLookupsAreAllCounted() throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 10_000; i++) {
                    audit.record("m", "k" + (i % 3), i % 7 != 0, "S.java:" + (i % 2));
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(audit.lookups().stream().mapToLong(KernelLookup::count).sum()).isEqualTo(40_000);
        assertThat(audit.lookups()).hasSize(3 * 2 * 2);
    }
}
