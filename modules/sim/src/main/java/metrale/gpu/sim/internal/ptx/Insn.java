// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.sim.internal.ptx;

/**
 * One decoded PTX instruction. Operands are register slots of the thread's register file (special
 * registers such as {@code %tid.x} have fixed slots, see {@link Special}) or immediates: source
 * {@code i} is {@code regs[src[i]]} when {@code src[i] >= 0}, else {@code imm[i]}. Values are raw
 * bits: a {@code .f32} is its int bits, a predicate is 0 or 1; a source is normalized to its type
 * when read, so the bits above a 32-bit value's width do not matter.
 */
final class Insn {

    // Opcodes.
    static final int MOV = 1, LD = 2, ST = 3, CVTA = 4, ADD = 5, SUB = 6, MUL = 7, MAD = 8, FMA = 9, DIV = 10,
            REM = 11, ABS = 12, NEG = 13, MIN = 14, MAX = 15, AND = 16, OR = 17, XOR = 18, NOT = 19, SHL = 20,
            SHR = 21, SETP = 22, SELP = 23, CVT = 24, BRA = 25, BAR = 26, FENCE = 27, ATOM = 28, RED = 29,
            SHFL = 30, VOTE = 31, TRAP = 32, RET = 33, EXIT = 34, CALL = 35, RCP = 36, SQRT = 37, RSQRT = 38,
            EX2 = 39, LG2 = 40, SIN = 41, COS = 42, POPC = 43, CLZ = 44, BREV = 45, BFE = 46, BFI = 47,
            PRMT = 48, CNOT = 49, TIMER = 50, PACK = 51, UNPACK = 52, ACTIVEMASK = 53, WARPSYNC = 54,
            COPYSIGN = 55, TESTP = 56, SHF = 57, NOP = 58, TANH = 59, MUL24 = 60, MAD24 = 61, BARRED = 62,
            REDUX = 63, SAD = 64, NANOSLEEP = 65;

    // Type classes (high byte of a type code); the low byte is the width in bits.
    static final int B = 1, U = 2, S = 3, F = 4, PRED = 5;

    static int type(int cls, int bits) {
        return cls << 8 | bits;
    }

    static int cls(int type) {
        return type >>> 8;
    }

    static int bits(int type) {
        return type & 0xff;
    }

    // State spaces.
    static final int GENERIC = 0, GLOBAL = 1, SHARED = 2, LOCAL = 3, PARAM = 4, CONST = 5;

    // Rounding modes: RN is also "none given".
    static final int RN = 0, RZ = 1, RM = 2, RP = 3, RNI = 4, RZI = 5, RMI = 6, RPI = 7;

    // mul/mad halves.
    static final int LO = 0, HI = 1, WIDE = 2;

    // Comparisons of setp.
    static final int EQ = 1, NE = 2, LT = 3, LE = 4, GT = 5, GE = 6, LO_ = 7, LS = 8, HI_ = 9, HS = 10, EQU = 11,
            NEU = 12, LTU = 13, LEU = 14, GTU = 15, GEU = 16, NUM = 17, NAN = 18;

    // Boolean combination of setp, and vote / bar.red modes.
    static final int BOOL_NONE = 0, BOOL_AND = 1, BOOL_OR = 2, BOOL_XOR = 3;
    static final int VOTE_ALL = 1, VOTE_ANY = 2, VOTE_UNI = 3, VOTE_BALLOT = 4, RED_POPC = 5;

    // shfl modes.
    static final int SHFL_UP = 1, SHFL_DOWN = 2, SHFL_BFLY = 3, SHFL_IDX = 4;

    // Atomic operations.
    static final int A_ADD = 1, A_MIN = 2, A_MAX = 3, A_AND = 4, A_OR = 5, A_XOR = 6, A_EXCH = 7, A_CAS = 8,
            A_INC = 9, A_DEC = 10;

    // Timer sources of TIMER.
    static final int CLOCK = 1, CLOCK64 = 2, GLOBALTIMER = 3;

    final int op;
    /** The 1-based line of the module text, for messages. */
    final int line;
    /** The instruction as written, for messages. */
    final String text;
    /** {@code file.cu:line} of the {@code .loc} in force at the instruction, or {@code null} when the PTX has no line info. */
    String source;

    /** {@return {@code PTX line N (file.cu:L) `text`}: where the instruction is, for messages} */
    String where() {
        return "PTX line " + line + (source == null ? "" : " (" + source + ")") + " `" + text + "`";
    }

    int guard = -1;
    boolean guardNeg;
    int type;
    int type2;
    int mode;
    int boolOp;
    boolean ftz;
    boolean sat;
    boolean approx;
    boolean negSrc2;
    int space;
    int vec = 1;
    int[] dst = NONE;
    int[] src = NONE;
    long[] imm = NO_IMM;
    /** Address operand: base register or -1, and the byte offset (a symbol's address folded in). */
    int areg = -1;
    long aoff;
    /** The state space the address's symbol lies in, or -1 when the address is a register's. */
    int asym = -1;
    /** Branch target pc, or the callee's index in the module. */
    int target = -1;
    String label;
    /** call: the caller's parameter-area offsets and sizes of the arguments and the return value. */
    int[] callArgs = NONE;
    int[] callRets = NONE;

    static final int[] NONE = new int[0];
    static final long[] NO_IMM = new long[0];

    Insn(int op, int line, String text) {
        this.op = op;
        this.line = line;
        this.text = text;
    }

    @Override
    public String toString() {
        return "line " + line + " `" + text + "`";
    }
}
