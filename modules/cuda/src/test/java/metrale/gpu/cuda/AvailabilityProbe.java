// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import metrale.gpu.spi.Availability;

/** Prints the CUDA provider's availability; {@link CudaProviderTest} runs it in a child JVM with other flags. */
public final class AvailabilityProbe {

    private AvailabilityProbe() {
    }

    /**
     * Prints {@code available=BOOL}, {@code reason=TEXT} and {@code present=BOOL}.
     *
     * @param args unused
     */
    public static void main(String[] args) {
        Availability a = new CudaBackendProvider().availability();
        System.out.println("available=" + a.available());
        System.out.println("reason=" + a.reason());
        System.out.println("present=" + a.present());
    }
}
