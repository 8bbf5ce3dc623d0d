// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import metrale.gpu.StepParam;

/**
 * The core's door into {@link StepParam}: its current value and the captured step that owns it,
 * which the API does not expose (an application changes a parameter through
 * {@link metrale.gpu.CapturedStep#set}, so that the graph follows). {@code StepParam} installs the
 * door when its class is initialized; this package is not exported, so no other module reaches it.
 */
public final class ParamDoor {

    /** What the door opens. */
    public interface Door {
        /**
         * {@return the value's bits as a step recorder keeps them: an {@code int}'s or a
         * {@code float}'s raw bits sign-extended, a {@code long}'s, {@code double}'s raw bits or
         * pointer's address as they are; 0 for a bytes parameter}
         *
         * @param p the parameter
         */
        long bits(StepParam<?> p);

        /**
         * {@return a bytes parameter's value, not copied (a stored array is never written), or {@code null}}
         *
         * @param p the parameter
         */
        byte[] wide(StepParam<?> p);

        /**
         * Checks {@code value} against the parameter's type and size and stores it.
         *
         * @param p     the parameter
         * @param value the new value
         * @throws NullPointerException     if {@code value} is null
         * @throws IllegalArgumentException if it is of another type or size
         */
        void store(StepParam<?> p, Object value);

        /**
         * {@return {@code owner} or the step that owned the parameter already} Claims it for
         * {@code owner} when no step did.
         *
         * @param p     the parameter
         * @param owner the claiming step
         */
        Object claim(StepParam<?> p, Object owner);

        /**
         * {@return the step that owns the parameter, or {@code null}}
         *
         * @param p the parameter
         */
        Object owner(StepParam<?> p);

        /**
         * Gives the parameter up if {@code owner} owns it.
         *
         * @param p     the parameter
         * @param owner the step that closes
         */
        void release(StepParam<?> p, Object owner);
    }

    private static volatile Door door;

    private ParamDoor() {
    }

    /**
     * Installs the door: {@link StepParam}'s class initializer calls it, once.
     *
     * @param d the door
     * @throws IllegalStateException if a door is installed already
     */
    public static void install(Door d) {
        synchronized (ParamDoor.class) {
            if (door != null) {
                throw new IllegalStateException("the StepParam door is installed already");
            }
            door = d;
        }
    }

    /**
     * {@return the door} The core only asks with a parameter in hand, so {@link StepParam}'s class
     * is initialized and the door installed.
     */
    static Door door() {
        return door;
    }
}
