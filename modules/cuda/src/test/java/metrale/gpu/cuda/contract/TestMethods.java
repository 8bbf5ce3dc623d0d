// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda.contract;

import java.lang.reflect.Method;
import java.util.TreeSet;

/** Prints the {@code @Test} methods of a class, inherited ones too, one a line: run-tests.sh runs each in its own JVM. */
public final class TestMethods {

    private TestMethods() {
    }

    /**
     * Prints {@code CLASS#method} lines.
     *
     * @param args the class name
     * @throws ClassNotFoundException if the class is missing
     */
    public static void main(String[] args) throws ClassNotFoundException {
        Class<?> c = Class.forName(args[0]);
        TreeSet<String> names = new TreeSet<>();
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            for (Method m : k.getDeclaredMethods()) {
                if (m.isAnnotationPresent(org.junit.jupiter.api.Test.class)) {
                    names.add(m.getName());
                }
            }
        }
        names.forEach(n -> System.out.println(c.getName() + "#" + n));
    }
}
