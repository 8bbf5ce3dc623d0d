package metrale.gpu.sim.internal;

import metrale.gpu.sim.SimThread;
import metrale.gpu.sim.ThreadBody;

/**
 * The one mutable {@link SimThread} a launch reuses for every thread, so running a thread body
 * allocates nothing. The loops write the fields; the accessors compute global indices on demand.
 */
final class Cursor implements SimThread {

    int tx;
    int ty;
    int tz;
    int bx;
    int by;
    int bz;
    final int bdx;
    final int bdy;
    final int bdz;
    final int gdx;
    final int gdy;
    final int gdz;

    Cursor(int gdx, int gdy, int gdz, int bdx, int bdy, int bdz) {
        this.gdx = gdx;
        this.gdy = gdy;
        this.gdz = gdz;
        this.bdx = bdx;
        this.bdy = bdy;
        this.bdz = bdz;
    }

    @Override
    public int threadX() {
        return tx;
    }

    @Override
    public int threadY() {
        return ty;
    }

    @Override
    public int threadZ() {
        return tz;
    }

    @Override
    public int blockX() {
        return bx;
    }

    @Override
    public int blockY() {
        return by;
    }

    @Override
    public int blockZ() {
        return bz;
    }

    @Override
    public int blockDimX() {
        return bdx;
    }

    @Override
    public int blockDimY() {
        return bdy;
    }

    @Override
    public int blockDimZ() {
        return bdz;
    }

    @Override
    public int gridDimX() {
        return gdx;
    }

    @Override
    public int gridDimY() {
        return gdy;
    }

    @Override
    public int gridDimZ() {
        return gdz;
    }

    @Override
    public int globalX() {
        return bx * bdx + tx;
    }

    @Override
    public int globalY() {
        return by * bdy + ty;
    }

    @Override
    public int globalZ() {
        return bz * bdz + tz;
    }

    /** Runs {@code body} for every thread of the block the cursor is on, x fastest. */
    void runBlock(ThreadBody body) {
        final int nx = bdx;
        final int ny = bdy;
        final int nz = bdz;
        for (int z = 0; z < nz; z++) {
            tz = z;
            for (int y = 0; y < ny; y++) {
                ty = y;
                for (int x = 0; x < nx; x++) {
                    tx = x;
                    body.run(this);
                }
            }
        }
    }
}
