// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

import java.util.ArrayList;
import java.util.List;

/**
 * One {@code .entry} or {@code .func} of a module, decoded: its code, the size of its register
 * file, its parameter area and its local depot.
 *
 * <p><b>Parameter area.</b> Each call frame has one: an entry's starts with the kernel's arguments
 * laid out as {@code cuLaunchKernel} packs them (each at its natural alignment); a function's
 * starts with its parameters and return values, then the {@code .param} variables its own call
 * sequences declare. {@code ld.param} / {@code st.param} address it.
 */
public final class PtxFunction {

    /** A formal parameter or return value: its offset in the frame's parameter area, and its size. */
    record Param(String name, int offset, int size, int align) {
    }

    final String name;
    final boolean entry;
    final int line;
    final List<Param> params = new ArrayList<>();
    final List<Param> rets = new ArrayList<>();
    int paramBytes;
    int regCount = Special.COUNT;
    int localBytes;
    /**
     * An entry's own static {@code .shared} arrays (declared in its body), at offsets after the
     * module's; another entry's arrays are not in this entry's blocks.
     */
    final java.util.Map<String, Long> ownShared = new java.util.HashMap<>();
    /** The static shared bytes of a block of this entry: the module's and its own. */
    int staticShared;
    Insn[] code = new Insn[0];
    /** Why the engine cannot run this function, or {@code null}. */
    String unsupported;
    /** Set by the compiler once the function is known to compile; {@code null} until then. */
    volatile Object compiled;

    PtxFunction(String name, boolean entry, int line) {
        this.name = name;
        this.entry = entry;
        this.line = line;
    }

    /** {@return the function's name as the PTX spells it} */
    public String name() {
        return name;
    }

    /** {@return whether it is an {@code .entry}} */
    public boolean isEntry() {
        return entry;
    }

    /** {@return why the engine cannot run it (naming the instruction and line), or {@code null} when it can} */
    public String unsupported() {
        return unsupported;
    }

    /** {@return the number of instructions} */
    public int size() {
        return code.length;
    }

    /** {@return the kernel parameters' offsets in the argument area, in declaration order} */
    public int[] paramOffsets() {
        int[] o = new int[params.size()];
        for (int i = 0; i < o.length; i++) {
            o[i] = params.get(i).offset();
        }
        return o;
    }

    /** {@return the kernel parameters' sizes in bytes, in declaration order} */
    public int[] paramSizes() {
        int[] o = new int[params.size()];
        for (int i = 0; i < o.length; i++) {
            o[i] = params.get(i).size();
        }
        return o;
    }

    /** {@return the bytes of the parameter area the formal parameters take, before any call sequence's slots} */
    int argBytes() {
        int end = 0;
        for (Param p : params) {
            end = Math.max(end, p.offset() + p.size());
        }
        for (Param p : rets) {
            end = Math.max(end, p.offset() + p.size());
        }
        return end;
    }

    /** {@return the bytes of the parameter area a frame of this function needs} */
    public int paramBytes() {
        return paramBytes;
    }

    @Override
    public String toString() {
        return (entry ? ".entry " : ".func ") + name;
    }
}
