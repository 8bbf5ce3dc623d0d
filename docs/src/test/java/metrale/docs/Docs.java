// SPDX-License-Identifier: Apache-2.0
package metrale.docs;

import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Where the repository is, and the module path of the project's modules as this test run has them. */
final class Docs {

    /** The modules a reader puts on {@code -p}, by a class of each. */
    static final List<String> MODULES = List.of("metrale.telemetry", "metrale.gpu", "metrale.gpu.sim", "metrale.gpu.cuda",
            "metrale.gpu.nccl", "metrale.gpu.testing", "metrale.examples");
    private static final List<String> MODULE_CLASSES = List.of("metrale.telemetry.Telemetry", "metrale.gpu.Gpu",
            "metrale.gpu.sim.SimKernels", "metrale.gpu.cuda.CudaBackendProvider", "metrale.gpu.nccl.Collectives",
            "metrale.gpu.testing.GpuTest", "metrale.examples.HeatKernels");

    private Docs() {
    }

    /** {@return the repository root: {@code -Dmetrale.repo.root}, else the first parent holding README.md and docs/} */
    static Path root() {
        String prop = System.getProperty("metrale.repo.root");
        if (prop != null && !prop.isBlank()) {
            return Path.of(prop).toAbsolutePath().normalize();
        }
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !(Files.exists(p.resolve("README.md")) && Files.isDirectory(p.resolve("docs")))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("no repository root above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    /** {@return the jar or classes folder of each project module, in {@link #MODULES} order} */
    static List<Path> moduleLocations() {
        List<Path> out = new ArrayList<>();
        for (String c : MODULE_CLASSES) {
            try {
                Class<?> k = Class.forName(c, false, Docs.class.getClassLoader());
                out.add(Path.of(k.getProtectionDomain().getCodeSource().getLocation().toURI()));
            } catch (ClassNotFoundException | URISyntaxException e) {
                throw new IllegalStateException("the docs build depends on the module holding " + c, e);
            }
        }
        return out;
    }

    /** {@return the project modules as a module path} */
    static String modulePath() {
        return String.join(File.pathSeparator, moduleLocations().stream().map(Path::toString).toList());
    }

    /** {@return this run's class path without the project modules: the test libraries a block may use} */
    static String libraryClassPath() {
        Set<Path> modules = new LinkedHashSet<>(moduleLocations());
        List<String> out = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!e.isBlank() && !modules.contains(Path.of(e).toAbsolutePath())) {
                out.add(e);
            }
        }
        return String.join(File.pathSeparator, out);
    }
}
