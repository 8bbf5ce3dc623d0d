// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import metrale.gpu.BackendUnavailableException;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.spi.Availability;
import metrale.gpu.spi.BackendProvider;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;
import org.junit.jupiter.api.Test;

class BackendsTest {

    private static final String NO_FLAG = "an NVIDIA driver is installed (libcuda.so.1) but native access is not enabled"
            + " for the class path: start java with --enable-native-access=ALL-UNNAMED";

    /** The records logged, as "LEVEL: message". */
    private final List<String> records = new ArrayList<>();
    private final System.Logger log = new System.Logger() {
        @Override
        public String getName() {
            return "test";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            records.add(level + ": " + msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            records.add(level + ": " + java.text.MessageFormat.format(format, params));
        }
    };

    private static BackendProvider provider(String name, int priority, Availability a) {
        return new BackendProvider() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public int priority() {
                return priority;
            }

            @Override
            public Availability availability() {
                return a;
            }

            @Override
            public Driver open(DriverConfig config) {
                throw new UnsupportedOperationException("not opened in this test");
            }
        };
    }

    private List<String> warnings() {
        return records.stream().filter(r -> r.startsWith("WARNING: ")).toList();
    }

    @Test
    void passingOverAnInstalledButUnusableDriverIsAWarningWithTheReasonAndTheFlag() {
        List<BackendProvider> all = List.of(provider("cuda", 100, Availability.presentButUnusable(NO_FLAG)),
                provider("sim", 0, Availability.yes()));
        assertThat(Backends.choose(null, all, log).name()).isEqualTo("sim");
        assertThat(warnings()).singleElement().satisfies(r -> assertThat(r)
                .contains("cuda backend is installed but cannot be used", "--enable-native-access=ALL-UNNAMED",
                        "using the sim backend instead"));
    }

    @Test
    void passingOverAbsentCudaIsNoWarning() {
        List<BackendProvider> all = List.of(provider("cuda", 100, Availability.no("libcuda.so.1 did not load")),
                provider("sim", 0, Availability.yes()));
        assertThat(Backends.choose(null, all, log).name()).isEqualTo("sim");
        assertThat(warnings()).isEmpty();
    }

    @Test
    void aNamedBackendIsNotAWarningAboutOthers() {
        List<BackendProvider> all = List.of(provider("cuda", 100, Availability.presentButUnusable(NO_FLAG)),
                provider("sim", 0, Availability.yes()));
        assertThat(Backends.choose("sim", all, log).name()).isEqualTo("sim");
        assertThat(warnings()).isEmpty();
    }

    @Test
    void aTypoIsAnIllegalArgumentListingTheBackends() {
        List<BackendProvider> all = List.of(provider("cuda", 100, Availability.yes()), provider("sim", 0, Availability.yes()));
        assertThatThrownBy(() -> Backends.choose("cdua", all, log))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'cdua'").hasMessageContaining("[cuda, sim]");
        assertThat(Backends.choose("CUDA", all, log).name()).as("names are case-insensitive").isEqualTo("cuda");
    }

    @Test
    void anUnavailableBackendLeadsWithTheReason() {
        List<BackendProvider> all = List.of(provider("cuda", 100, Availability.presentButUnusable(NO_FLAG)),
                provider("sim", 0, Availability.yes()));
        BackendUnavailableException e = catchThrowableOfType(BackendUnavailableException.class,
                () -> Backends.choose("cuda", all, log));
        assertThat(e).isNotNull();
        assertThat(e.error()).isEqualTo(CudaError.NO_DEVICE);
        assertThat(e.getMessage()).startsWith("Gpu.open: no available backend named 'cuda': cuda: " + NO_FLAG)
                .endsWith("(CUDA_ERROR_NO_DEVICE (100))");
        assertThat(e.reason()).startsWith("no available backend named 'cuda': cuda: " + NO_FLAG);
    }

    @Test
    void aNamedButUnavailableBackendIsStillNoDeviceWithTheReason() {
        List<BackendProvider> all = List.of(provider("cuda", 100, Availability.presentButUnusable(NO_FLAG)),
                provider("sim", 0, Availability.yes()));
        assertThatThrownBy(() -> Backends.choose("cuda", all, log))
                .isInstanceOf(GpuException.class)
                .hasMessageContaining("NO_DEVICE").hasMessageContaining("--enable-native-access=ALL-UNNAMED");
    }

    private static BackendProvider withDefaults(String name, int priority, Availability a,
                                                java.util.Map<metrale.gpu.Setting, String> defaults) {
        BackendProvider inner = provider(name, priority, a);
        return new BackendProvider() {
            @Override
            public String name() {
                return inner.name();
            }

            @Override
            public int priority() {
                return inner.priority();
            }

            @Override
            public Availability availability() {
                return inner.availability();
            }

            @Override
            public Driver open(DriverConfig config) {
                return inner.open(config);
            }

            @Override
            public java.util.Map<metrale.gpu.Setting, String> defaults(DriverConfig config) {
                if (defaults == null) {
                    throw new IllegalStateException("broken provider");
                }
                return defaults;
            }
        };
    }

    @Test
    void aBackendsDefaultsAreThoseOfTheNamedOneOrOfTheOneAnAutomaticChoiceTakes() {
        var simDefaults = java.util.Map.of(metrale.gpu.Setting.LEAK_DETECTION, "all");
        List<BackendProvider> all = List.of(withDefaults("cuda", 100, Availability.no("no driver"), java.util.Map.of()),
                withDefaults("sim", 0, Availability.yes(), simDefaults));
        DriverConfig none = new DriverConfig(java.util.Map.of());
        assertThat(Backends.defaults("sim", none, all)).isEqualTo(simDefaults);
        assertThat(Backends.defaults("SIM", none, all)).as("any case").isEqualTo(simDefaults);
        assertThat(Backends.defaults("cuda", none, all)).as("named, available or not").isEmpty();
        assertThat(Backends.defaults(null, none, all)).as("the automatic choice: sim").isEqualTo(simDefaults);
        assertThat(Backends.defaults("cdua", none, all)).as("no such backend: opening says why").isEmpty();
        assertThat(Backends.defaults(null, none, List.of(withDefaults("cuda", 100, Availability.no("no driver"),
                simDefaults)))).as("nothing available").isEmpty();
        assertThat(Backends.defaults("sim", none, List.of(withDefaults("sim", 0, Availability.yes(), null))))
                .as("a provider that fails").isEmpty();
        List<BackendProvider> both = List.of(withDefaults("cuda", 100, Availability.yes(), java.util.Map.of()),
                withDefaults("sim", 0, Availability.yes(), simDefaults));
        assertThat(Backends.defaults(null, none, both)).as("cuda wins the automatic choice").isEmpty();
    }
}
