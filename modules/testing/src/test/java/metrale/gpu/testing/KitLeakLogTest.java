// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.List;
import metrale.gpu.contract.TestLog;
import metrale.gpu.testing.fixtures.LeakFixture;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;

/** A leak the kit reports in its failure is not logged again at WARNING when the kit closes the runtime. */
class KitLeakLogTest {

    @Test
    void theKitsLeakReportIsTheOnlyOne() {
        int mark = TestLog.mark();
        EngineTestKit.engine("junit-jupiter").selectors(selectClass(LeakFixture.class)).execute().testEvents()
                .assertStatistics(s -> s.started(1).failed(1));
        String site = "LeakFixture.java:" + LeakFixture.leakLine;
        List<TestLog.Entry> warnings = TestLog.since(mark, System.Logger.Level.WARNING, m -> true);
        assertThat(warnings).as("WARNING records after the kit reported the leak").isEmpty();
        assertThat(TestLog.since(mark, System.Logger.Level.DEBUG, m -> m.contains("leak: ") && m.contains(site)))
                .singleElement().satisfies(e -> assertThat(e.message()).contains("(512 B,").endsWith("(reported before close)"));
    }
}
