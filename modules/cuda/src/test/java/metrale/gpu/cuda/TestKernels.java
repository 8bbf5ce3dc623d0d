// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import metrale.gpu.cuda.internal.CudaDevice;
import metrale.gpu.spi.DriverConfig;

/** The test PTX (src/test/cuda/kernels.cu, built by build.sh) and a driver opener. */
final class TestKernels {

    private TestKernels() {
    }

    /** {@return the bytes of {@code /ptx/NAME.ptx}} */
    static byte[] ptx(String name) {
        try (InputStream in = TestKernels.class.getResourceAsStream("/ptx/" + name + ".ptx")) {
            if (in == null) {
                throw new IllegalStateException("missing test resource /ptx/" + name + ".ptx: run src/test/cuda/build.sh");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@return a driver on the default device, through the provider as the runtime opens it} */
    static CudaDevice open() {
        return (CudaDevice) new CudaBackendProvider().open(DriverConfig.empty());
    }
}
