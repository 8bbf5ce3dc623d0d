// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import metrale.gpu.sim.SimOptions;
import metrale.gpu.spi.DriverConfig;
import org.junit.jupiter.api.Test;

/** Option {@code sim.ptx}: compiled by default, interpreted when asked, anything else refused by name. */
class SimPtxOptionTest {

    private static SimSettings parse(Map<String, String> options) {
        return SimSettings.parse(new DriverConfig(options), SimProcess.fresh());
    }

    @Test
    void compiledIsTheDefaultAndInterpretedTurnsItOff() {
        assertThat(parse(Map.of()).ptxCompiled()).isTrue();
        assertThat(parse(Map.of(SimOptions.PTX, SimOptions.PTX_COMPILED)).ptxCompiled()).isTrue();
        assertThat(parse(Map.of(SimOptions.PTX, "Interpreted")).ptxCompiled()).isFalse();
        assertThat(parse(Map.of(SimOptions.PTX, SimOptions.PTX_INTERPRETED)).ptxCompiled()).isFalse();
    }

    @Test
    void anUnknownWordIsRefusedNamingTheOption() {
        assertThatThrownBy(() -> parse(Map.of(SimOptions.PTX, "jit")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sim.ptx")
                .hasMessageContaining("METRALE_SIM_PTX").hasMessageContaining("'jit'")
                .hasMessageContaining("compiled").hasMessageContaining("interpreted");
    }
}
