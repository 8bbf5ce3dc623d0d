// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.internal;

import java.util.Objects;
import metrale.gpu.CudaError;
import metrale.gpu.GpuException;
import metrale.gpu.KernelArgs;
import metrale.gpu.KernelHandle;
import metrale.gpu.LaunchConfig;
import metrale.gpu.Stream;
import metrale.gpu.spi.ModuleImages;
import metrale.telemetry.CallSites;

/**
 * The rules of modules and kernels: images checked before the driver reads them, a replaced
 * module unloaded only after the launches that hold its functions, audited lookups, and the
 * launch path. Each method runs inside the caller's gate frame.
 *
 * <p><b>Timing.</b> With {@link metrale.gpu.GpuOptions#timing()} on, each launch is a span that
 * ends after the runtime synchronizes the launch's stream, so it covers the kernel's execution
 * (and whatever was queued before it on that stream), not just the enqueue. On a capturing stream
 * the span covers the enqueue only, since a sync would invalidate the capture; debug sync likewise
 * skips capturing streams. Neither sync is counted as a stream sync.
 *
 * <p><b>Launch path.</b> With the launch trace, timing, debug sync and JFR off, {@link #launch}
 * takes no lock and allocates nothing: two handle lookups, one read of the trace flag, the driver
 * call and a counter increment.
 */
final class KernelPart {

    private static final System.Logger LOG = System.getLogger("metrale.gpu");

    private final Core c;
    private final Object moduleLoadLock = new Object();

    KernelPart(Core c) {
        this.c = c;
    }

    /** Inside a releaser's frame: replacing a module waits for the launches that may still hold its functions. */
    void loadModule(String name, byte[] image) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(image, "image");
        String bad = ModuleImages.isElf(image) ? ModuleImages.elfProblem(image)
                : ModuleImages.isFatbin(image) ? ModuleImages.fatbinProblem(image) : null;
        if (bad != null) {
            // Refused before the driver, which reads past a cut image (a SIGSEGV on driver 580).
            throw new GpuException(CudaError.INVALID_IMAGE, "loadModule", "module=" + name + ", " + image.length
                    + " bytes: " + bad + "; nothing was loaded");
        }
        // One load at a time, so replacing a name unloads exactly the module it replaced.
        synchronized (moduleLoadLock) {
            long h = c.get(() -> c.driver().moduleLoadData(name, image), () -> "loadModule " + name);
            Modules.Module old = c.modules().put(name, h, c.functions());
            if (old != null) {
                // Its handles are out of the table; a call that read one before has entered
                // the gate before this point, so the grace period waits for it.
                c.gate().awaitGrace();
                try {
                    c.driver().moduleUnload(old.handle);
                } catch (GpuException e) {
                    RuntimeException r = c.fail(e, "loadModule " + name + " (unloading the module it replaces)");
                    if (r != e) {
                        throw r;
                    }
                    LOG.log(System.Logger.Level.WARNING, "metrale-gpu: loadModule " + name
                            + ": unloading the replaced module failed: " + e.getMessage());
                }
            }
        }
    }

    boolean hasModule(String name) {
        return c.modules().get(Objects.requireNonNull(name, "name")) != null;
    }

    KernelHandle kernel(String module, String func) {
        Objects.requireNonNull(module, "module");
        Objects.requireNonNull(func, "func");
        String site = CallSites.caller();
        var audit = c.telemetry().audit();
        Modules.Module m = c.modules().get(module);
        if (m == null) {
            audit.record(module, func, false, site);
            throw new GpuException(CudaError.NOT_FOUND, "kernel", module + "::" + func + " looked up at " + site
                    + ": no module named '" + module + "' is loaded (loaded: " + c.modules().names() + ")");
        }
        long f;
        try {
            f = c.driver().moduleGetFunction(m.handle, func);
        } catch (GpuException e) {
            audit.record(module, func, false, site);
            RuntimeException r = c.fail(e, "kernel " + module + "::" + func);
            if (r == e) {
                r = new GpuException(e.error(), e.rawCode(), e.operation(), module + "::" + func + " looked up at "
                        + site + (e.details().isEmpty() ? "" : "; " + e.details()), e);
            }
            throw r;
        }
        long id = c.modules().resolved(m, func, f, c.functions());
        if (id == 0) {
            audit.record(module, func, false, site);
            throw new GpuException(CudaError.INVALID_HANDLE, "kernel", module + "::" + func + " looked up at "
                    + site + ": the module was replaced by another thread during the lookup; look it up again");
        }
        audit.record(module, func, true, site);
        c.trace().nameKernel(id, module, func);
        KernelHandle h = new KernelHandle(id);
        c.opCache().publishKernel(module, func, h);
        return h;
    }

    byte[] compileCuda(String name, String source, String... compilerOptions) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(compilerOptions, "options");
        for (String o : compilerOptions) {
            Objects.requireNonNull(o, "options element");
        }
        return c.get(() -> c.driver().compileToPtx(name, source, compilerOptions.clone()), () -> "compileCuda " + name);
    }

    void setMaxDynamicSharedMemory(KernelHandle kernel, int bytes) {
        long f = c.liveFunction(kernel, "setMaxDynamicSharedMemory");
        Checks.size(bytes, "bytes", "setMaxDynamicSharedMemory");
        c.run(() -> c.driver().funcSetMaxDynamicSharedMemory(f, bytes),
                () -> "setMaxDynamicSharedMemory " + c.trace().nameOf(kernel.value()) + " " + bytes + " B");
    }

    void launch(KernelHandle kernel, LaunchConfig config, Stream stream, KernelArgs args) {
        long raw = c.liveFunction(kernel, "launch");
        long func = kernel.value();
        Objects.requireNonNull(config, "config");
        long st = c.liveStream(stream, "launch");
        if (Objects.requireNonNull(args, "args").isClosed()) {
            throw new IllegalStateException("launch: KernelArgs is closed");
        }
        if (c.checkPointers()) {
            c.checkPointerArgs(func, args);
        }
        long t0 = c.timingOn() ? c.timing().begin() : 0;
        var jfr = Jfr.beginLaunch();
        // Not through Core.run: a lambda per launch would allocate.
        try {
            c.driver().launchKernel(raw, config, st, args);
        } catch (GpuException e) {
            throw launchFailed(e, func, "");
        }
        if (c.tracing().on()) {
            c.tracing().kernel(func, config, args);
        }
        c.counters().launch();
        if (c.debugSync() || t0 != 0) {
            syncAfterLaunch(func, st, t0);
        }
        Jfr.launch(jfr, c.trace(), func, config, stream.handle());
    }

    /** The debug-sync and timing wait after a launch; skipped on a capturing stream, which a sync would invalidate. */
    private void syncAfterLaunch(long func, long st, long t0) {
        try {
            if (!c.capturingRaw(st)) {
                c.driver().streamSynchronize(st);
            }
        } catch (GpuException e) {
            throw launchFailed(e, func, c.debugSync() ? " (debug sync)" : " (timing sync)");
        } finally {
            c.timing().end(func, t0);
        }
    }

    private RuntimeException launchFailed(GpuException e, long func, String suffix) {
        return c.fail(e, "launch " + c.trace().nameOf(func) + suffix);
    }
}
