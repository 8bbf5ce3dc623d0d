// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import metrale.telemetry.fakeruntime.FakeRuntime;
import org.junit.jupiter.api.Test;

class CallSitesTest {

    static final class Internal {
        static String call() {
            return Deeper.call();
        }

        static String throughJdk() {
            return java.util.stream.Stream.of(1).map(i -> CallSites.caller()).findFirst().orElseThrow();
        }

        static final class Deeper {
            static String call() {
                return CallSites.caller();
            }
        }
    }

    /** Registered as internal: recursion through it puts that many internal frames above the test's. */
    static final class Deep {
        static String through(int frames) {
            return frames <= 1 ? CallSites.caller() : through(frames - 1);
        }
    }

    static final class NotRegistered {
        /** The site {@link CallSites#caller()} reports here, and the line it should report. */
        static String[] call() {
            return new String[] {CallSites.caller(), "CallSitesTest.java:" + line()};
        }
    }

    private static int line() {
        return new Throwable().getStackTrace()[1].getLineNumber();
    }

    @Test
    void directCallerIsThisFile() {
        String site = CallSites.caller(); int line = line();
        assertThat(site).isEqualTo("CallSitesTest.java:" + line);
    }

    @Test
    void registeredClassAndItsNestedClassesAreSkipped() {
        CallSites.skip("metrale.telemetry.CallSitesTest$Internal");
        String site = Internal.call(); int line = line();
        assertThat(site).isEqualTo("CallSitesTest.java:" + line);
    }

    @Test
    void jdkFramesBetweenRuntimeFramesAreSkipped() {
        CallSites.skip("metrale.telemetry.CallSitesTest$Internal");
        String site = Internal.throughJdk(); int line = line();
        assertThat(site).isEqualTo("CallSitesTest.java:" + line);
    }

    /** The walk reads at most MAX_DEPTH frames: an application frame deeper than that is not found. */
    @Test
    void theWalkIsBoundedInDepth() {
        CallSites.skip("metrale.telemetry.CallSitesTest$Deep");
        String near = Deep.through(CallSites.MAX_DEPTH - 8); int line = line();
        assertThat(near).isEqualTo("CallSitesTest.java:" + line);
        assertThat(Deep.through(CallSites.MAX_DEPTH)).as("the caller lies past the bound").isEqualTo("unknown");
        assertThat(Deep.through(10 * CallSites.MAX_DEPTH)).isEqualTo("unknown");
    }

    @Test
    void unregisteredClassIsTheCaller() {
        String[] got = NotRegistered.call();
        assertThat(got[0]).isEqualTo(got[1]);
    }

    @Test
    void registeredPackageAndSubpackagesAreSkipped() {
        CallSites.skip("metrale.telemetry.fakeruntime.");
        String site = FakeRuntime.op(); int line = line();
        assertThat(site).isEqualTo("CallSitesTest.java:" + line);
    }

    @Test
    void matchingRules() {
        assertThat(CallSites.matches("metrale.gpu.Gpu", "metrale.gpu.Gpu")).isTrue();
        assertThat(CallSites.matches("metrale.gpu.Gpu$Inner", "metrale.gpu.Gpu")).isTrue();
        assertThat(CallSites.matches("metrale.gpu.Gpu$Inner$1", "metrale.gpu.Gpu")).isTrue();
        assertThat(CallSites.matches("metrale.gpu.GpuX", "metrale.gpu.Gpu")).isFalse();
        assertThat(CallSites.matches("metrale.gpu.Gp", "metrale.gpu.Gpu")).isFalse();
        assertThat(CallSites.matches("metrale.gpu.X", "metrale.gpu.")).isTrue();
        assertThat(CallSites.matches("metrale.gpu.spi.X", "metrale.gpu.")).isTrue();
        assertThat(CallSites.matches("metrale.gpux.X", "metrale.gpu.")).isFalse();
    }

    @Test
    void thisModulesClassesAreInternalButItsTestsAreNot() {
        assertThat(CallSites.internal(Counters.class)).isTrue();
        assertThat(CallSites.internal(CallSites.class)).isTrue();
        assertThat(CallSites.internal(CallSitesTest.class)).isFalse();
        assertThat(CallSites.internal(String.class)).as("JDK").isTrue();
    }

    @Test
    void badRulesAreRejected() {
        assertThatThrownBy(() -> CallSites.skip("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CallSites.skip("a.", null)).isInstanceOf(NullPointerException.class);
    }
}
