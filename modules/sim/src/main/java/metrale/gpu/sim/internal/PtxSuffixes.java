// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal;

import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The words that may follow an opcode after a {@code .} ({@code ld.global.nc.v4.f32}), as PTX ISA
 * 9.0 lists them over all instructions: state spaces, types, rounding and comparison modes,
 * memory orders and scopes, cache and eviction qualifiers, shapes, and the modifiers of every
 * instruction family up to {@code tcgen05}. A suffix is checked on its own, not against its
 * opcode, so the check refuses a word that is no PTX modifier at all ({@code ld.parm.f32}) and
 * lets a misplaced real one through: a false refusal of a valid kernel is worse than a miss. A
 * part with {@code ::} ({@code .shared::cta}, {@code .L2::evict_last}, {@code .kind::f16}) and
 * every type-, vector- and shape-like word ({@code .b128}, {@code .e4m3x2}, {@code .v8},
 * {@code .m16n8k16}, {@code .32x32b}) is accepted.
 */
final class PtxSuffixes {

    /** Lower-case modifier words, as PTX ISA 9.0 uses them after an opcode. */
    private static final Set<String> WORDS = Set.of(
            // state spaces and their relatives
            "global", "shared", "local", "const", "param", "generic", "tex", "reg", "sreg", "surf", "to", "from",
            // scopes and memory orders
            "cta", "cluster", "gpu", "sys", "gl", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "weak",
            "strong", "mmio", "unified",
            // cache operators and hints
            "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "ci", "uniform", "evict_normal", "evict_first",
            "evict_last", "evict_unchanged", "no_allocate", "cache_hint", "fractional", "range", "cvt",
            // rounding, precision and clamping
            "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna", "rs", "ftz", "noftz", "sat", "satfinite",
            "approx", "full", "relu", "nan", "xorsign", "abs", "oob", "finite", "infinite", "number", "notanumber",
            "normal", "subnormal", "emulated",
            // comparisons and boolean operations
            "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu",
            "num", "and", "or", "xor", "not", "popc", "cnot",
            // integer arithmetic
            "wide", "cc", "shiftamt", "l", "r", "clamp", "wrap", "pred",
            // control flow, warps and barriers
            "uni", "sync", "aligned", "all", "any", "ballot", "eqv", "up", "down", "bfly", "idx", "warp", "red",
            "arrive", "wait", "noreturn",
            // atomics and reductions
            "exch", "cas", "inc", "dec", "add", "sub", "min", "max", "mul", "acc",
            // prmt modes
            "f4e", "b4e", "rc8", "ecl", "ecr", "rc16",
            // textures and surfaces
            "cube", "acube", "level", "grad", "base", "trap", "zero", "b", "p", "a", "g", "c", "d", "width", "height",
            "depth", "channel_data_type", "channel_order", "normalized_coords", "filter_mode", "addr_mode_0",
            "addr_mode_1", "addr_mode_2", "array_size", "num_mipmap_levels", "num_samples",
            "force_unnormalized_coords", "memory_layout", "texref", "samplerref", "surfref", "mask",
            // fences and proxies
            "fence", "proxy", "alias", "async", "tensormap", "op_restrict", "sync_restrict", "mbarrier_init",
            // mbarrier
            "init", "inval", "arrive_drop", "expect_tx", "complete_tx", "test_wait", "try_wait", "parity",
            "pending_count", "nocomplete", "noinc",
            // bulk and tensor copies
            "bulk", "tensor", "commit_group", "wait_group", "wait_all", "read", "mbarrier", "reduce", "prefetch",
            "tile", "im2col", "im2col_w", "im2col_w_128", "gather4", "scatter4", "bulk_group", "multicast", "cp",
            "ld_reduce", "st", "ld", "cp_fenceproxy",
            // tensormap.replace fields
            "replace", "global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride",
            "elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode",
            // matrix instructions
            "row", "col", "trans", "load", "store", "mma", "mma_async", "sp", "ws", "block_scale", "scale_vec",
            "kind", "collector", "ashift", "shift", "pack", "unpack", "alloc", "dealloc", "relinquish_alloc_permit",
            "commit", "before_thread_sync", "after_thread_sync", "cta_group", "ordered_metadata", "stride",
            // cluster launch control, dependent launches, registers
            "try_cancel", "query_cancel", "is_canceled", "get_first_ctaid", "launch_dependents", "align");

    /** Types, vectors, selectors, cache levels and repeat counts: {@code b32}, {@code f16x2}, {@code e4m3x2}, {@code ue8m0}, {@code v4}, {@code x2}, {@code L2}. */
    private static final Pattern TYPE_LIKE = Pattern.compile("[a-z]{1,3}\\d+(m\\d+)?(x\\d+)?(_p\\d+)?");
    /** Matrix shapes ({@code m16n8k16}, {@code m8n8}), tcgen05 data-path shapes ({@code 32x32b}, {@code 16x32bx2}), texture geometries ({@code 2d}, {@code a2dms}) and numbers. */
    private static final Pattern SHAPE_LIKE = Pattern.compile(
            "m\\d+n\\d+(k\\d+)?|\\d+x\\d+b(x\\d+)?|a?\\d+d(ms)?|\\d+");

    private PtxSuffixes() {
    }

    /**
     * {@return the first suffix of {@code word} that is no PTX modifier, or {@code null}}
     *
     * @param word an instruction word with its suffixes, e.g. {@code ld.global.f32}
     */
    static String unknown(String word) {
        String[] parts = word.split("\\.", -1);
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            if (p.isEmpty()) {
                return "";
            }
            if (p.contains("::")) {
                continue;
            }
            String w = p.toLowerCase(Locale.ROOT);
            if (!WORDS.contains(w) && !TYPE_LIKE.matcher(w).matches() && !SHAPE_LIKE.matcher(w).matches()) {
                return p;
            }
        }
        return null;
    }
}
