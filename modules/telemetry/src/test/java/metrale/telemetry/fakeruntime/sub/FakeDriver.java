// SPDX-License-Identifier: Apache-2.0
package metrale.telemetry.fakeruntime.sub;

import metrale.telemetry.CallSites;

/** A class in a subpackage of the fake runtime. */
public final class FakeDriver {

    private FakeDriver() {
    }

    /**
     * Asks for the caller's site.
     *
     * @return what {@link CallSites#caller()} says
     */
    public static String call() {
        return CallSites.caller();
    }
}
