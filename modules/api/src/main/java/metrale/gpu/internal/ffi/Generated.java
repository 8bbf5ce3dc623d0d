// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal.ffi;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a class that a generator wrote: edit the list it was generated from and run the generator
 * again instead of editing the class.
 *
 * <p>Not {@code javax.annotation.processing.Generated}: that one lives in {@code java.compiler},
 * which no module of this project requires, and has source retention. This one is kept in the
 * class file, where coverage and mutation tools that skip classes annotated {@code Generated}
 * (JaCoCo, PIT) find it.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.TYPE)
public @interface Generated {

    /** {@return the generator, as a path from the repository root} */
    String value();

    /** {@return the list the class was generated from, as a path from the repository root} */
    String from();
}
