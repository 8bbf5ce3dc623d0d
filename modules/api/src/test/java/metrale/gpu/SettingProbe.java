// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/** Prints what the builder resolves; {@link SettingTest} runs it in a child JVM with the environment set. */
public final class SettingProbe {

    private SettingProbe() {
    }

    /**
     * Prints {@code builder=D2H,TIMING}, {@code unset=D2H,TIMING}, {@code telemetry=D2H,TIMING} and
     * {@code leaks=LEVEL,SAMPLE} (or {@code leaks=refused: MESSAGE}).
     *
     * @param args unused
     */
    public static void main(String[] args) {
        try {
            GpuOptions o = Gpu.builder().options();
            System.out.println("leaks=" + o.leakDetection() + "," + o.leakDetectionSample());
        } catch (IllegalArgumentException e) {
            // Every builder refuses such an environment; nothing else can be printed.
            System.out.println("leaks=refused: " + e.getMessage());
            return;
        }
        GpuOptions off = Gpu.builder().d2hTrace(false).timing(false).options();
        GpuOptions unset = Gpu.builder().options();
        System.out.println("builder=" + off.d2hTrace() + "," + off.timing());
        System.out.println("builderTelemetry=" + off.telemetry().counters().d2hSiteTrace() + "," + off.telemetry().timing().enabled());
        System.out.println("unset=" + unset.d2hTrace() + "," + unset.timing());
        System.out.println("telemetry=" + new metrale.telemetry.Telemetry().counters().d2hSiteTrace() + ","
                + metrale.telemetry.Telemetry.global().timing().enabled());
    }
}
