// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * A JFR event per collective or point-to-point call: what, how much, which rank, on which stream.
 * Its duration is the host time of the call (on CUDA the enqueue; on the simulator the whole
 * operation).
 */
@Name("metrale.gpu.Collective")
@Label("GPU Collective")
@Category({"metrale-gpu", "Collectives"})
@Description("A collective (all-reduce, broadcast, ...) or send/recv call of a communicator")
public final class CollectiveEvent extends Event {

    /** {@code allReduce}, {@code broadcast}, {@code reduce}, {@code allGather}, {@code reduceScatter}, {@code send}, {@code recv}. */
    @Label("Operation")
    public String operation;

    /** This rank's input bytes. */
    @Label("Bytes")
    @DataAmount
    public long bytes;

    /** The element type. */
    @Label("Type")
    public String type;

    /** This rank. */
    @Label("Rank")
    public int rank;

    /** The rank count. */
    @Label("Ranks")
    public int ranks;

    /** {@code nccl} or {@code sim}. */
    @Label("Communicator")
    public String kind;

    /** The runtime's stream id. */
    @Label("Stream")
    public long stream;

    /** Creates an event; fill the fields, then {@code commit()}. */
    public CollectiveEvent() {
    }
}
