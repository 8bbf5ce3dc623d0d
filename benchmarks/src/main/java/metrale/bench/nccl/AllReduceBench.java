// SPDX-License-Identifier: Apache-2.0
package metrale.bench.nccl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.concurrent.TimeUnit;
import metrale.bench.cuda.Bare;
import metrale.bench.cuda.CudaFixture;
import metrale.gpu.DevicePtr;
import metrale.gpu.Gpu;
import metrale.gpu.Setting;
import metrale.gpu.Stream;
import metrale.gpu.nccl.Collectives;
import metrale.gpu.nccl.Communicator;
import metrale.gpu.nccl.NcclDataType;
import metrale.gpu.nccl.NcclRedOp;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * All-reduce by size on every GPU of the machine as one process (one rank per GPU), through
 * {@link Communicator#allReduce} against the bare {@code ncclAllReduce} downcall on a communicator
 * of its own; each operation is one out-of-place float32 sum on the legacy stream, then a
 * synchronize. Score: microseconds per all-reduce.
 *
 * <p>Bandwidth as nccl-tests defines it: algorithm bandwidth {@code algBw = bytes / time}, bus
 * bandwidth {@code busBw = algBw * 2 (n - 1) / n}. With one GPU (n = 1) NCCL's all-reduce is a
 * device-local copy and the bus bandwidth is 0 by definition: compare the times (and algBw) with
 * {@code benchmarks/torch_allreduce.py}, which measures {@code torch.distributed.all_reduce} the
 * same way at world size 1.
 *
 * <p>Run: {@code OUT=DIR run-bench.sh 'metrale\.bench\.nccl\.'} in the bundle (NCCL found by the
 * loader or {@code -Dmetrale.nccl.library=...}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class AllReduceBench {

    /** Bytes per rank. */
    @Param({"4096", "1048576", "16777216", "268435456"})
    public long bytes;

    private Gpu gpu;
    private Communicator comm;
    private DevicePtr send;
    private DevicePtr recv;
    private long bareComm;
    private long count;

    /** Creates the state; JMH calls it. */
    public AllReduceBench() {
    }

    /**
     * The bench's own binding of the NCCL calls the baseline makes, independent of the module's; the
     * library is {@link Setting#NCCL_LIBRARY} as the settings table resolves it, else {@code libnccl.so.2}.
     */
    private static final class BareNccl {
        static final SymbolLookup LIB = SymbolLookup.libraryLookup(
                Setting.NCCL_LIBRARY.text(null).orElse("libnccl.so.2"), Arena.global());
        static final MethodHandle INIT_ALL = handle("ncclCommInitAll", ADDRESS, JAVA_INT, ADDRESS);
        static final MethodHandle DESTROY = handle("ncclCommDestroy", JAVA_LONG);
        static final MethodHandle ALL_REDUCE = handle("ncclAllReduce", JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT,
                JAVA_INT, JAVA_LONG, JAVA_LONG);

        private static MethodHandle handle(String name, java.lang.foreign.MemoryLayout... args) {
            return Linker.nativeLinker().downcallHandle(LIB.find(name).orElseThrow(() ->
                    new UnsatisfiedLinkError("NCCL has no " + name)), FunctionDescriptor.of(JAVA_INT, args));
        }
    }

    /** Opens CUDA on device 0, a one-rank communicator each way, and the buffers. */
    @Setup(Level.Trial)
    public void setUp() throws Throwable {
        var a = Collectives.ncclAvailability();
        if (!a.available()) {
            throw new IllegalStateException("NCCL unavailable: " + a.reason());
        }
        gpu = CudaFixture.open(CudaFixture.telemetryOff());
        comm = Collectives.initAll(List.of(gpu)).getFirst();
        send = gpu.alloc(bytes);
        recv = gpu.alloc(bytes);
        gpu.memset(send, 0, bytes);
        count = bytes / 4;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            MemorySegment devs = arena.allocateFrom(JAVA_INT, gpu.deviceOrdinal());
            int st = (int) BareNccl.INIT_ALL.invokeExact(out, 1, devs);
            if (st != 0) {
                throw new IllegalStateException("ncclCommInitAll returned " + st);
            }
            bareComm = out.get(JAVA_LONG, 0);
        }
        gpu.synchronize();
    }

    /** Makes the runtime's context current on the iteration's thread, for the bare baseline. */
    @Setup(Level.Iteration)
    public void bind() {
        gpu.bindToThread();
    }

    /** Frees and closes. */
    @TearDown(Level.Trial)
    public void tearDown() throws Throwable {
        gpu.synchronize();
        comm.close();
        int st = (int) BareNccl.DESTROY.invokeExact(bareComm);
        gpu.free(send);
        gpu.free(recv);
        gpu.close();
        if (st != 0) {
            throw new IllegalStateException("ncclCommDestroy returned " + st);
        }
    }

    /** {@code comm.allReduce} then {@code gpu.synchronize()}. */
    @Benchmark
    public void allReduce() {
        comm.allReduce(send, recv, count, NcclDataType.FLOAT32, NcclRedOp.SUM, Stream.DEFAULT);
        gpu.synchronize();
    }

    /** Baseline: bare {@code ncclAllReduce} on the legacy stream, then {@code cuCtxSynchronize}. */
    @Benchmark
    public void allReduceBare() throws Throwable {
        int st = (int) BareNccl.ALL_REDUCE.invokeExact(send.address(), recv.address(), count, 7, 0, bareComm, 0L);
        if (st != 0) {
            throw new IllegalStateException("ncclAllReduce returned " + st);
        }
        Bare.ctxSynchronize();
    }
}
