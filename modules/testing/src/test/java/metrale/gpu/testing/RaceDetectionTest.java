// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import metrale.gpu.Gpu;
import metrale.gpu.testing.fixtures.MissingWaitRace;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/** The seed property finds the missing {@code streamWaitEvent} that the default schedule hides, and shrinks to a seed that shows it. */
class RaceDetectionTest {

    private static boolean racesOn(long seed) {
        Gpu gpu = TestGpus.sim().seed(seed).twins(new KitKernels()).open();
        try {
            return TwoStreamPipeline.firstWrong(TwoStreamPipeline.run(gpu, false)) >= 0;
        } finally {
            GpuChecks.verifyAndClose(gpu);
        }
    }

    @Test
    void thePropertyOverSeedsIsFalsifiedAndShrinksToASeedThatShowsTheRace() {
        List<Event> failed = EngineTestKit.engine("jqwik").selectors(selectClass(MissingWaitRace.class)).execute()
                .testEvents().failed().list();
        assertThat(failed).hasSize(1);
        Throwable t = failed.getFirst().getRequiredPayload(TestExecutionResult.class).getThrowable().orElseThrow();
        Matcher m = Pattern.compile("schedule seed (\\d+): out\\[0\\] = ").matcher(String.valueOf(t.getMessage()));
        assertThat(m.find()).as("failure names the seed: %s", t.getMessage()).isTrue();
        long shrunk = Long.parseLong(m.group(1));
        assertThat(racesOn(shrunk)).as("seed %d replays the race", shrunk).isTrue();
        assertThat(racesOn(0)).as("the default schedule hides it").isFalse();
        // jqwik shrinks a seed toward 0, the default schedule; here down to the smallest seed that races.
        for (long smaller = 0; smaller < shrunk; smaller++) {
            assertThat(racesOn(smaller)).as("seed %d below the shrunk %d", smaller, shrunk).isFalse();
        }
    }
}
