// SPDX-License-Identifier: Apache-2.0
package metrale.examples;

/**
 * The plain-Java reference for {@link HeatDemo}: the same initial grid and the same float
 * arithmetic as {@code jacobi_step} in {@code heat.cu}, on the CPU, so the device result can be
 * checked element by element.
 *
 * <p>Java's {@code float} arithmetic is IEEE 754 binary32 with round-to-nearest and never fuses a
 * multiply and an add; the CUDA kernel spells its operations with {@code __fadd_rn} and
 * {@code __fmul_rn} (and the PTX is built with {@code -fmad=false}), so both compute bit-identical
 * grids when they add in the same order.
 */
public final class HeatReference {

    private HeatReference() {
    }

    /**
     * {@return the initial temperatures of an {@code n x n} grid, row-major} The top edge is held
     * at 1.0 and the left edge at 0.5 (the boundary never changes); a square of side {@code n / 8}
     * in the middle starts at 0.8; everything else starts at 0.
     *
     * @param n the side, at least 3
     */
    public static float[] initialGrid(int n) {
        float[] u = new float[n * n];
        for (int i = 0; i < n; i++) {
            u[i * n] = 0.5f;
        }
        for (int j = 0; j < n; j++) {
            u[j] = 1.0f;
        }
        int side = Math.max(1, n / 8);
        int lo = (n - side) / 2;
        for (int i = lo; i < lo + side; i++) {
            for (int j = lo; j < lo + side; j++) {
                u[i * n + j] = 0.8f;
            }
        }
        return u;
    }

    /**
     * Runs {@code steps} Jacobi steps from {@code initial}.
     *
     * @param initial the starting grid, {@code n * n} values; not modified
     * @param n       the side
     * @param alpha   the diffusion number, at most 0.25 for stability
     * @param steps   how many steps
     * @return the grid after the last step
     */
    public static float[] run(float[] initial, int n, float alpha, int steps) {
        float[] in = initial.clone();
        float[] out = initial.clone();
        for (int s = 0; s < steps; s++) {
            step(in, out, n, alpha);
            float[] t = in;
            in = out;
            out = t;
        }
        return in;
    }

    private static void step(float[] in, float[] out, int n, float alpha) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                int c = i * n + j;
                if (i == 0 || j == 0 || i == n - 1 || j == n - 1) {
                    out[c] = in[c];
                    continue;
                }
                float centre = in[c];
                // Same order as the kernel: ((up + down) + left) + right.
                float sum = ((in[c - n] + in[c + n]) + in[c - 1]) + in[c + 1];
                float lap = sum - 4.0f * centre;
                out[c] = centre + alpha * lap;
            }
        }
    }

    /**
     * {@return the largest {@code |x[k] - y[k]|}} A NaN anywhere makes the result NaN.
     *
     * @param x one grid
     * @param y another of the same length
     * @throws IllegalArgumentException if the lengths differ
     */
    public static float maxAbsDiff(float[] x, float[] y) {
        if (x.length != y.length) {
            throw new IllegalArgumentException("grids differ in length: " + x.length + " vs " + y.length);
        }
        float m = 0f;
        for (int k = 0; k < x.length; k++) {
            float d = Math.abs(x[k] - y[k]);
            if (Float.isNaN(d)) {
                return Float.NaN;
            }
            m = Math.max(m, d);
        }
        return m;
    }
}
