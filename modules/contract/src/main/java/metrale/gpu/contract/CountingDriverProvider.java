// SPDX-License-Identifier: Apache-2.0
package metrale.gpu.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import metrale.gpu.spi.Availability;
import metrale.gpu.spi.BackendProvider;
import metrale.gpu.spi.Driver;
import metrale.gpu.spi.DriverConfig;

/**
 * The provider of backend {@value CountingDriver#BACKEND}, a service of this module
 * ({@code provides} in its descriptor and {@code META-INF/services} for the class path): it opens the backend named by option {@value CountingDriver#INNER}
 * and wraps its driver. Its priority is the lowest, and it is available only where another
 * backend is, so an automatic choice never lands on it.
 */
public final class CountingDriverProvider implements BackendProvider {

    /** Created by {@link ServiceLoader}. */
    public CountingDriverProvider() {
    }

    @Override
    public String name() {
        return CountingDriver.BACKEND;
    }

    @Override
    public int priority() {
        return Integer.MIN_VALUE;
    }

    @Override
    public Availability availability() {
        for (BackendProvider p : others()) {
            if (p.availability().available()) {
                return Availability.yes();
            }
        }
        return Availability.no("it wraps another backend, and none is available");
    }

    @Override
    public Driver open(DriverConfig config) {
        String name = config.get(CountingDriver.INNER, null);
        if (name == null) {
            throw new IllegalArgumentException("backend " + CountingDriver.BACKEND + " needs option " + CountingDriver.INNER + " naming the backend it wraps");
        }
        for (BackendProvider p : others()) {
            if (p.name().equalsIgnoreCase(name)) {
                return new CountingDriver(p.open(config));
            }
        }
        throw new IllegalArgumentException("option " + CountingDriver.INNER + "=" + name + " names no backend on the class path");
    }

    /** {@inheritDoc} The defaults of the backend it wraps. */
    @Override
    public java.util.Map<metrale.gpu.Setting, String> defaults(DriverConfig config) {
        String name = config.get(CountingDriver.INNER, null);
        for (BackendProvider p : others()) {
            if (p.name().equalsIgnoreCase(name)) {
                return p.defaults(config);
            }
        }
        return java.util.Map.of();
    }

    private static List<BackendProvider> others() {
        List<BackendProvider> out = new ArrayList<>();
        for (BackendProvider p : ServiceLoader.load(BackendProvider.class, CountingDriverProvider.class.getClassLoader())) {
            if (!(p instanceof CountingDriverProvider)) {
                out.add(p);
            }
        }
        return out;
    }
}
