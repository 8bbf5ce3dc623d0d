// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.testing;

import java.util.List;

/**
 * What {@link GpuChecks} found wrong with a runtime after a test: one line per problem, each
 * naming its call site. An {@link AssertionError}, so test frameworks report it as a failure.
 *
 * <pre>{@code
 * GpuCheckFailure f = assertThrows(GpuCheckFailure.class, () -> GpuChecks.verify(gpu));
 * assertThat(f.problems()).singleElement().asString()
 *         .startsWith("leak: ").contains("allocated at MyService.java:");
 * }</pre>
 */
public final class GpuCheckFailure extends AssertionError {

    private static final long serialVersionUID = 1L;

    /** The problems, one per element. */
    private final String[] problems;

    /**
     * Creates the failure.
     *
     * @param problems the problems found, at least one
     */
    public GpuCheckFailure(List<String> problems) {
        super(message(problems));
        this.problems = problems.toArray(String[]::new);
    }

    /** {@return the problems, one per element, in the order found} */
    public List<String> problems() {
        return List.of(problems);
    }

    private static String message(List<String> problems) {
        if (problems.isEmpty()) {
            throw new IllegalArgumentException("a GpuCheckFailure needs at least one problem");
        }
        StringBuilder sb = new StringBuilder("the GPU runtime was left with ").append(problems.size())
                .append(" problem(s):");
        for (String p : problems) {
            sb.append("\n  - ").append(p.replace("\n", "\n    "));
        }
        return sb.toString();
    }
}
