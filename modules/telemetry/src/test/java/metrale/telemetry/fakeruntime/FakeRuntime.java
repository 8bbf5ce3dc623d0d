// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry.fakeruntime;

import metrale.telemetry.CallSites;
import metrale.telemetry.fakeruntime.sub.FakeDriver;

/** Stands in for a runtime package that registers itself with {@link CallSites#skip}. */
public final class FakeRuntime {

    private FakeRuntime() {
    }

    /**
     * Asks for the caller's site through two internal frames.
     *
     * @return what {@link CallSites#caller()} says
     */
    public static String op() {
        return FakeDriver.call();
    }
}
