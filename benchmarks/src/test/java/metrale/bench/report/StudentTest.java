// SPDX-License-Identifier: Apache-2.0
package metrale.bench.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The error bar the page computes from per-iteration data is JMH's: Student's t at 99.9%. */
class StudentTest {

    @Test
    void theQuantilesAreTheTablesOnes() {
        // Two-sided 99.9% (p = 0.9995) and 95% (p = 0.975) critical values of Student's t.
        assertThat(Student.quantile(0.9995, 1)).isCloseTo(636.619, within(1e-3));
        assertThat(Student.quantile(0.9995, 4)).isCloseTo(8.610, within(1e-3));
        assertThat(Student.quantile(0.9995, 9)).isCloseTo(4.781, within(1e-3));
        assertThat(Student.quantile(0.9995, 30)).isCloseTo(3.646, within(1e-3));
        assertThat(Student.quantile(0.975, 2)).isCloseTo(4.303, within(1e-3));
        assertThat(Student.quantile(0.975, 1000)).isCloseTo(1.962, within(1e-3));
    }

    @Test
    void theHalfWidthIsTTimesTheStandardError() {
        double[] s = {1, 2, 3, 4, 5};
        // sd = sqrt(2.5), n = 5, t(0.9995, 4) = 8.6103
        assertThat(Student.halfWidth(s)).isCloseTo(8.6103 * Math.sqrt(2.5) / Math.sqrt(5), within(1e-3));
        assertThat(Student.halfWidth(new double[] {7, 7, 7})).isZero();
        assertThat(Student.halfWidth(new double[] {7})).isNaN();
        assertThat(Student.halfWidth(new double[0])).isNaN();
    }

    @Test
    void aQuantileOutsideItsDomainIsRefused() {
        assertThatThrownBy(() -> Student.quantile(0.5, 3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Student.quantile(0.99, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
