// SPDX-License-Identifier: Apache-2.0
package metrale.gpu;

/**
 * Resolves {@code leakDetection} and {@code leakDetection.sample} together with the deprecated
 * {@code allocSites} and {@code allocSites.sample} they replace. Each name resolves by the table's
 * rule (code, then system property, then environment variable); between an old and a new name the
 * one from the earlier of those sources wins, and the two from the same source must agree, else
 * the {@link IllegalArgumentException} names both.
 */
@SuppressWarnings("removal")
final class LeakSettings {

    /** Where a value came from, in the order they win. */
    private enum Source {
        CODE("given in code"), PROPERTY("system property"), ENVIRONMENT("environment variable");

        final String words;

        Source(String words) {
            this.words = words;
        }
    }

    /** A resolved value of one name, with where it came from and its text for messages. */
    private record Found<T>(T value, Source source, String text, Setting setting) {
        String describe() {
            return setting.what() + " = '" + text + "' (" + source.words + ")";
        }
    }

    /**
     * The resolved pair.
     *
     * @param level  the level
     * @param sample the rate of {@link LeakDetection#SAMPLED}
     */
    record Resolved(LeakDetection level, int sample) {
    }

    private LeakSettings() {
    }

    /**
     * {@return the level and rate}
     *
     * @param level     {@code leakDetection} given in code, or {@code null}
     * @param sample    {@code leakDetection.sample} given in code, or {@code null}
     * @param oldOn     the deprecated {@code allocSites} given in code, or {@code null}
     * @param oldSample the deprecated {@code allocSites.sample} given in code, or {@code null}
     * @param fallback  the level when no name is set anywhere: the backend's default
     * @throws IllegalArgumentException if a value is outside its grammar or below 1, or an old and a
     *                                  new name from the same source disagree
     */
    static Resolved resolve(LeakDetection level, Integer sample, Boolean oldOn, Integer oldSample, LeakDetection fallback) {
        Found<LeakDetection> newLevel = find(Setting.LEAK_DETECTION, level == null ? null : level.option(),
                LeakDetection::fromOption);
        Found<Long> newSample = find(Setting.LEAK_DETECTION_SAMPLE, sample == null ? null : sample.toString(),
                t -> Setting.parseWhole(Setting.LEAK_DETECTION_SAMPLE.what(), t));
        Found<Boolean> on = find(Setting.ALLOC_SITES, oldOn == null ? null : oldOn.toString(),
                t -> Setting.parseBoolean(Setting.ALLOC_SITES.what(), t));
        Found<Long> every = find(Setting.ALLOC_SITES_SAMPLE, oldSample == null ? null : oldSample.toString(),
                t -> Setting.parseWhole(Setting.ALLOC_SITES_SAMPLE.what(), t));
        atLeastOne(newSample);
        atLeastOne(every);

        // What the old names say about the level: a switch that is off decides alone; else the earlier
        // of the two sources speaks for the pair.
        Found<?> oldWhy = on != null && !on.value() ? on : earliest(on, every);
        LeakDetection oldLevel = oldWhy == null ? null
                : on != null && !on.value() ? LeakDetection.OFF
                : every != null && every.value() > 1 ? LeakDetection.SAMPLED : LeakDetection.ALL;
        LeakDetection lvl = pick(newLevel, newLevel == null ? null : newLevel.value(), oldWhy, oldLevel, fallback);

        // Only a rate above 1 is a rate; 1 said "every site", a level.
        Found<Long> oldRate = every != null && every.value() > 1 ? every : null;
        long rate = pick(newSample, newSample == null ? null : newSample.value(), oldRate,
                oldRate == null ? null : oldRate.value(), (long) LeakDetection.DEFAULT_SAMPLE);
        if (rate > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(Setting.LEAK_DETECTION_SAMPLE.what() + " = " + rate
                    + " is more than " + Integer.MAX_VALUE);
        }
        return new Resolved(lvl, (int) rate);
    }

    /** The new name's value, the old names' value or the default: the earlier source wins; one source must agree. */
    private static <T> T pick(Found<?> newer, T newValue, Found<?> older, T oldValue, T fallback) {
        if (newer == null && older == null) {
            return fallback;
        }
        if (older == null) {
            return newValue;
        }
        if (newer == null) {
            return oldValue;
        }
        int order = newer.source().compareTo(older.source());
        if (order == 0 && !newValue.equals(oldValue)) {
            throw new IllegalArgumentException(newer.describe() + " conflicts with the deprecated " + older.describe()
                    + ", which means " + newer.setting().key() + "=" + words(oldValue) + ": set only "
                    + newer.setting().key());
        }
        return order <= 0 ? newValue : oldValue;
    }

    private static String words(Object value) {
        return value instanceof LeakDetection l ? l.option() : value.toString();
    }

    private static Found<?> earliest(Found<?> a, Found<?> b) {
        if (a == null || b == null) {
            return a == null ? b : a;
        }
        return a.source().compareTo(b.source()) <= 0 ? a : b;
    }

    private static void atLeastOne(Found<Long> f) {
        if (f != null && f.value() < 1) {
            throw new IllegalArgumentException(f.describe() + ": must be >= 1");
        }
    }

    private static <T> Found<T> find(Setting s, String given, java.util.function.Function<String, T> parse) {
        String text;
        Source source;
        if (given != null) {
            text = given;
            source = Source.CODE;
        } else if (!blank(text = System.getProperty(s.property()))) {
            source = Source.PROPERTY;
        } else if (!blank(text = System.getenv(s.environment()))) {
            source = Source.ENVIRONMENT;
        } else {
            return null;
        }
        text = text.trim();
        return new Found<>(parse.apply(text), source, text, s);
    }

    private static boolean blank(String v) {
        return v == null || v.isBlank();
    }
}
