// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import metrale.gpu.CudaError;
import org.junit.jupiter.api.Test;

/**
 * ld and st: scalar and vector (.v2, .v4) global accesses, narrow loads that sign- or zero-extend,
 * narrow stores that write only their bytes, and generic accesses through {@code cvta} to shared
 * and local memory (each thread's local memory its own).
 */
class PtxMemoryTest {

    private static final String LOADS = PtxRig.HEAD + """
            .visible .entry loads(
            	.param .u64 loads_in,
            	.param .u64 loads_out
            )
            {
            	.reg .b16 %h<4>;
            	.reg .b32 %r<16>;
            	.reg .b64 %rd<16>;
            	.reg .f32 %f<4>;
            	ld.param.u64 %rd1, [loads_in];
            	ld.param.u64 %rd2, [loads_out];
            	ld.global.s8 %r1, [%rd1];
            	ld.global.u8 %r2, [%rd1];
            	ld.global.s16 %r3, [%rd1+2];
            	ld.global.u16 %r4, [%rd1+2];
            	ld.global.s32 %rd3, [%rd1+4];
            	ld.global.u32 %rd4, [%rd1+4];
            	ld.global.s8 %h1, [%rd1+1];
            	ld.global.s16 %rd5, [%rd1+2];
            	st.global.u32 [%rd2], %r1;
            	st.global.u32 [%rd2+4], %r2;
            	st.global.u32 [%rd2+8], %r3;
            	st.global.u32 [%rd2+12], %r4;
            	st.global.u64 [%rd2+16], %rd3;
            	st.global.u64 [%rd2+24], %rd4;
            	st.global.b16 [%rd2+32], %h1;
            	st.global.u64 [%rd2+40], %rd5;
            	ld.global.v2.u32 {%r5, %r6}, [%rd1+8];
            	ld.global.v4.u32 {%r7, %r8, %r9, %r10}, [%rd1+16];
            	ld.global.v2.u64 {%rd6, %rd7}, [%rd1+32];
            	ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd1+48];
            	st.global.v2.u32 [%rd2+48], {%r6, %r5};
            	st.global.v4.u32 [%rd2+64], {%r10, %r9, %r8, %r7};
            	st.global.v2.u64 [%rd2+80], {%rd7, %rd6};
            	st.global.v4.f32 [%rd2+96], {%f3, %f2, %f1, %f0};
            	st.global.u8 [%rd2+113], %r2;
            	st.global.b16 [%rd2+116], %h1;
            	ret;
            }
            """;

    @Test
    void scalarVectorAndNarrowLoadsAndStores() {
        HeapGlobal mem = new HeapGlobal();
        long in = mem.alloc(64);
        long out = mem.alloc(128);
        ByteBuffer ib = mem.region(in);
        ib.put(0, (byte) 0x80).put(1, (byte) 0xfe).putShort(2, (short) 0x8001).putInt(4, 0x8000_0002);
        for (int k = 8; k < 48; k += 4) {
            ib.putInt(k, 0x1000_0000 + k);
        }
        ib.putFloat(48, 1.5f).putFloat(52, -2f).putFloat(56, 3.25f).putFloat(60, Float.MIN_VALUE);
        ByteBuffer ob = mem.region(out);
        for (int k = 0; k < 128; k++) {
            ob.put(k, (byte) 0x5a);
        }
        PtxRig.launch(LOADS, "loads", mem, 1, 1, 0, in, out);
        assertThat(ob.getInt(0)).as("ld.s8 sign-extends").isEqualTo(0xffffff80);
        assertThat(ob.getInt(4)).as("ld.u8 zero-extends").isEqualTo(0x80);
        assertThat(ob.getInt(8)).as("ld.s16").isEqualTo(0xffff8001);
        assertThat(ob.getInt(12)).as("ld.u16").isEqualTo(0x8001);
        assertThat(ob.getLong(16)).as("ld.s32 into 64 bits").isEqualTo(0xffff_ffff_8000_0002L);
        assertThat(ob.getLong(24)).as("ld.u32 into 64 bits").isEqualTo(0x8000_0002L);
        assertThat(ob.getShort(32)).as("ld.s8 into 16 bits").isEqualTo((short) 0xfffe);
        assertThat(ob.getLong(40)).as("ld.s16 into 64 bits").isEqualTo(0xffff_ffff_ffff_8001L);
        assertThat(ob.getInt(48)).isEqualTo(0x1000_000c);
        assertThat(ob.getInt(52)).isEqualTo(0x1000_0008);
        assertThat(new int[] {ob.getInt(64), ob.getInt(68), ob.getInt(72), ob.getInt(76)})
                .containsExactly(0x1000_001c, 0x1000_0018, 0x1000_0014, 0x1000_0010);
        assertThat(ob.getLong(80)).isEqualTo(ib.getLong(40));
        assertThat(ob.getLong(88)).isEqualTo(ib.getLong(32));
        assertThat(new float[] {ob.getFloat(96), ob.getFloat(100), ob.getFloat(104), ob.getFloat(108)})
                .containsExactly(Float.MIN_VALUE, 3.25f, -2f, 1.5f);
        assertThat(ob.get(112)).as("bytes around a st.u8 are kept").isEqualTo((byte) 0x5a);
        assertThat(ob.get(113)).isEqualTo((byte) 0x80);
        assertThat(ob.get(114)).isEqualTo((byte) 0x5a);
        assertThat(ob.getShort(116)).isEqualTo((short) 0xfffe);
        assertThat(ob.getShort(118)).as("a st.b16 writes two bytes").isEqualTo((short) 0x5a5a);
    }

    private static final String GENERIC = PtxRig.HEAD + """
            .shared .align 8 .b8 sbuf[256];

            .visible .entry generic(
            	.param .u64 generic_out
            )
            {
            	.local .align 8 .b8 lbuf[16];
            	.reg .b32 %r<12>;
            	.reg .b64 %rd<16>;
            	ld.param.u64 %rd1, [generic_out];
            	cvta.to.global.u64 %rd1, %rd1;
            	mov.u32 %r1, %tid.x;
            	mul.wide.u32 %rd2, %r1, 4;
            	// Shared memory through a generic address: st to it, barrier, a neighbour's value back.
            	mov.u64 %rd3, sbuf;
            	cvta.shared.u64 %rd4, %rd3;
            	add.s64 %rd5, %rd4, %rd2;
            	mad.lo.s32 %r2, %r1, 10, 7;
            	st.u32 [%rd5], %r2;
            	bar.sync 0;
            	add.s32 %r3, %r1, 1;
            	and.b32 %r3, %r3, 31;
            	mul.wide.u32 %rd6, %r3, 4;
            	add.s64 %rd7, %rd4, %rd6;
            	ld.u32 %r4, [%rd7];
            	add.s64 %rd8, %rd3, %rd6;
            	ld.shared.u32 %r5, [%rd8];
            	cvta.to.shared.u64 %rd9, %rd7;
            	sub.s64 %rd9, %rd9, %rd8;
            	cvt.u32.u64 %r6, %rd9;
            	// Local memory through a generic address: each thread's own.
            	mov.u64 %rd10, lbuf;
            	cvta.local.u64 %rd11, %rd10;
            	mul.lo.s32 %r7, %r1, 3;
            	st.u32 [%rd11+4], %r7;
            	st.local.u32 [lbuf+8], %r1;
            	bar.sync 0;
            	ld.local.u32 %r8, [lbuf+4];
            	ld.u32 %r9, [%rd11+8];
            	mul.wide.u32 %rd12, %r1, 32;
            	add.s64 %rd13, %rd1, %rd12;
            	st.global.v4.u32 [%rd13], {%r4, %r5, %r6, %r8};
            	st.global.u32 [%rd13+16], %r9;
            	ret;
            }
            """;

    @Test
    void genericAccessesReachSharedAndLocalMemory() {
        HeapGlobal mem = new HeapGlobal();
        int threads = 32;
        long out = mem.alloc(32 * threads);
        PtxRig.launch(GENERIC, "generic", mem, 1, threads, 0, out);
        ByteBuffer ob = mem.region(out);
        for (int t = 0; t < threads; t++) {
            int neighbour = (t + 1) & 31;
            assertThat(ob.getInt(32 * t)).as("generic ld of shared, thread %d", t).isEqualTo(neighbour * 10 + 7);
            assertThat(ob.getInt(32 * t + 4)).as("ld.shared of the same word").isEqualTo(neighbour * 10 + 7);
            assertThat(ob.getInt(32 * t + 8)).as("cvta.to.shared undoes cvta.shared").isZero();
            assertThat(ob.getInt(32 * t + 12)).as("ld.local of a generic st, thread %d", t).isEqualTo(t * 3);
            assertThat(ob.getInt(32 * t + 16)).as("generic ld of a st.local, thread %d", t).isEqualTo(t);
        }
    }

    private static final String VECTOR_AT = PtxRig.HEAD + """
            .visible .entry v(
            	.param .u64 v_p,
            	.param .u32 v_off
            )
            {
            	.reg .b32 %r<6>;
            	.reg .b64 %rd<4>;
            	ld.param.u64 %rd1, [v_p];
            	ld.param.u32 %r1, [v_off];
            	cvt.u64.u32 %rd2, %r1;
            	add.s64 %rd3, %rd1, %rd2;
            	ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd3];
            	st.global.v2.u32 [%rd3], {%r5, %r4};
            	ret;
            }
            """;

    @Test
    void aVectorAccessIsAlignedToItsWholeSize() {
        HeapGlobal mem = new HeapGlobal();
        long p = mem.alloc(64);
        PtxRig.launch(VECTOR_AT, "v", mem, 1, 1, 0, p, 16);
        for (int off : new int[] {4, 8}) {
            assertThatThrownBy(() -> PtxRig.launch(VECTOR_AT, "v", mem, 1, 1, 0, p, off))
                    .isInstanceOfSatisfying(PtxFault.class, f -> assertThat(f.error()).isEqualTo(CudaError.MISALIGNED_ADDRESS))
                    .hasMessageContaining("not aligned to the access's 16 bytes")
                    .hasMessageContaining("ld.global.v4.u32");
        }
    }

    @Test
    void anEntryMayNotStoreToItsOwnArguments() {
        String ptx = PtxRig.HEAD + """
                .visible .entry k(
                	.param .u32 k_a
                )
                {
                	st.param.u32 [k_a], 5;
                	ret;
                }
                """;
        assertThatThrownBy(() -> PtxRig.launch(ptx, "k", new HeapGlobal(), 1, 1, 0, 1))
                .isInstanceOfSatisfying(PtxFault.class, f -> assertThat(f.error()).isEqualTo(CudaError.ILLEGAL_INSTRUCTION))
                .hasMessageContaining("a store to the kernel's parameters");
    }
}
