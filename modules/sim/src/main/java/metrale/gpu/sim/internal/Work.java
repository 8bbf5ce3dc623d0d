package metrale.gpu.sim.internal;

/** One unit of device work: a copy, a memset, a kernel, an event marker, a graph. */
interface Work {

    /**
     * Executes the work on the device.
     *
     * @param engine the device's memory and state
     * @throws SimFault on a device-side fault, which the device latches as sticky
     */
    void run(Engine engine);

    /** {@return a short description, for fault messages} */
    String describe();
}
