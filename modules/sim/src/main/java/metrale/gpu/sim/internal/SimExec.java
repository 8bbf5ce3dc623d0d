package metrale.gpu.sim.internal;

/** An executable graph and its last launch, which the next launch waits for. */
final class SimExec {

    final Works.GraphRun run;
    Op lastLaunch;

    SimExec(Works.GraphRun run) {
        this.run = run;
    }
}
