// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.nccl;

/**
 * Counters of one communicator.
 *
 * @param calls    collective and point-to-point calls that were accepted
 * @param bytes    bytes of this rank's input over those calls ({@code count * type.bytes()}, times
 *                 the rank count for reduce-scatter's input)
 * @param failures calls that threw, from a refused argument or a closed communicator to a failed collective
 */
public record CollectiveStats(long calls, long bytes, long failures) {
}
