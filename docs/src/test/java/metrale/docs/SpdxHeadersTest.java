// SPDX-License-Identifier: Apache-2.0
package metrale.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every source file carries the SPDX licence line, by the rules of {@code scripts/spdx-headers.sh}:
 * first line of a {@code .java} file, the line after {@code #!} of a shell script. Skips build
 * output ({@code target/}) and hidden directories. Names each file that lacks it.
 */
class SpdxHeadersTest {

    static final String JAVA_LINE = "// SPDX-License-Identifier: Apache-2.0";
    static final String SHELL_LINE = "# SPDX-License-Identifier: Apache-2.0";
    private static final Pattern SHEBANG_SH = Pattern.compile("^#!.*(/|env )(ba)?sh(\\s.*)?$");
    private static final Pattern NOT_SHELL = Pattern.compile(".*\\.(java|md|xml|cmd|ptx|cu|json|log|txt|properties|svg)$");

    @Test
    void everySourceFileHasTheSpdxLine() throws IOException {
        Path root = Docs.root();
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (Path f : sourceFiles(root)) {
            List<String> head = firstLines(f);
            String name = f.getFileName().toString();
            boolean ok;
            if (name.endsWith(".java")) {
                ok = !head.isEmpty() && head.get(0).equals(JAVA_LINE);
            } else if (isShell(name, head)) {
                ok = head.isEmpty() ? false
                        : head.get(0).startsWith("#!") ? head.size() > 1 && head.get(1).equals(SHELL_LINE)
                        : head.get(0).equals(SHELL_LINE);
            } else {
                continue;
            }
            checked++;
            if (!ok) {
                missing.add(root.relativize(f).toString());
            }
        }
        assertThat(checked).as("source files found under " + root).isGreaterThan(50);
        assertThat(missing).as(missing.size() + " file(s) lack the SPDX line (run scripts/spdx-headers.sh):\n  "
                + String.join("\n  ", missing)).isEmpty();
    }

    @Test
    void theScriptIsThere() {
        assertThat(Docs.root().resolve("scripts/spdx-headers.sh")).isExecutable();
    }

    static boolean isShell(String name, List<String> head) {
        if (name.endsWith(".sh")) {
            return true;
        }
        if (NOT_SHELL.matcher(name).matches() || head.isEmpty()) {
            return false;
        }
        return SHEBANG_SH.matcher(head.get(0)).matches();
    }

    private static List<String> firstLines(Path f) throws IOException {
        byte[] b;
        try (var in = Files.newInputStream(f)) {
            b = in.readNBytes(512);
        }
        return new String(b, StandardCharsets.ISO_8859_1).lines().limit(2).toList();
    }

    static List<Path> sourceFiles(Path root) throws IOException {
        List<Path> out = new ArrayList<>();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                String n = dir.getFileName() == null ? "" : dir.getFileName().toString();
                if (!dir.equals(root) && (n.equals("target") || (n.startsWith(".") && n.length() > 1))) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (attrs.isRegularFile()) {
                    out.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        out.sort(null);
        return out;
    }
}
