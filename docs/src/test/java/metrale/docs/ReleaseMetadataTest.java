// SPDX-License-Identifier: Apache-2.0
package metrale.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * What a public repository needs beyond each pom's own fields (which the enforcer checks in every
 * module): the licence files, a changelog entry for the version, the BOM listing every published
 * module at the project's version, and a sources and a javadoc jar beside each published jar.
 */
class ReleaseMetadataTest {

    private static Document pom(Path p) throws Exception {
        var f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(false);
        return f.newDocumentBuilder().parse(p.toFile());
    }

    private static String child(Element e, String name) {
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c && c.getTagName().equals(name)) {
                return c.getTextContent().trim();
            }
        }
        return null;
    }

    private static Element childElement(Element e, String name) {
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c && c.getTagName().equals(name)) {
                return c;
            }
        }
        return null;
    }

    private static String version() throws Exception {
        return child(pom(Docs.root().resolve("pom.xml")).getDocumentElement(), "version");
    }

    /** A published module: in the root reactor, a jar, and not marked maven.deploy.skip. */
    record Module(Path dir, String artifactId) {
    }

    static List<Module> published() throws Exception {
        Path root = Docs.root();
        Element project = pom(root.resolve("pom.xml")).getDocumentElement();
        NodeList modules = childElement(project, "modules").getElementsByTagName("module");
        List<Module> out = new ArrayList<>();
        for (int i = 0; i < modules.getLength(); i++) {
            Path dir = root.resolve(modules.item(i).getTextContent().trim());
            Element p = pom(dir.resolve("pom.xml")).getDocumentElement();
            String packaging = child(p, "packaging");
            Element props = childElement(p, "properties");
            boolean skip = props != null && "true".equals(child(props, "maven.deploy.skip"));
            if (!skip && (packaging == null || packaging.equals("jar"))) {
                out.add(new Module(dir, child(p, "artifactId")));
            }
        }
        return out;
    }

    @Test
    void licenceNoticeAndChangelog() throws Exception {
        Path root = Docs.root();
        String licence = Files.readString(root.resolve("LICENSE"), StandardCharsets.UTF_8);
        assertThat(licence).contains("Apache License", "Version 2.0, January 2004", "TERMS AND CONDITIONS");
        assertThat(root.resolve("NOTICE")).isRegularFile();
        String v = version();
        String changelog = Files.readString(root.resolve("CHANGELOG.md"), StandardCharsets.UTF_8);
        String section = v.endsWith("-SNAPSHOT") ? "## [Unreleased]" : "## [" + v + "]";
        assertThat(changelog).as("CHANGELOG.md has a section for " + v).contains(section);
    }

    @Test
    void theBomListsEveryPublishedModuleAtTheProjectVersion() throws Exception {
        Element bom = pom(Docs.root().resolve("bom/pom.xml")).getDocumentElement();
        assertThat(child(bom, "artifactId")).isEqualTo("metrale-gpu-bom");
        assertThat(child(bom, "version")).as("bom/pom.xml's version is the project's").isEqualTo(version());
        assertThat(childElement(bom, "parent")).as("the BOM has no parent: importing it must not import test libraries").isNull();
        NodeList deps = childElement(childElement(bom, "dependencyManagement"), "dependencies").getElementsByTagName("dependency");
        List<String> managed = new ArrayList<>();
        for (int i = 0; i < deps.getLength(); i++) {
            Element d = (Element) deps.item(i);
            managed.add(child(d, "artifactId"));
            assertThat(child(d, "version")).isEqualTo("${project.version}");
        }
        List<String> publishedIds = published().stream().map(Module::artifactId).toList();
        assertThat(publishedIds).contains("metrale-telemetry", "metrale-gpu", "metrale-gpu-sim", "metrale-gpu-cuda");
        assertThat(managed).as("bom/pom.xml manages every published module").containsExactlyInAnyOrderElementsOf(publishedIds);
    }

    @Test
    void everyPublishedJarHasSourcesAndJavadocBesideIt() throws Exception {
        String v = version();
        List<String> missing = new ArrayList<>();
        int built = 0;
        for (Module m : published()) {
            Path target = m.dir().resolve("target");
            Path jar = target.resolve(m.artifactId() + "-" + v + ".jar");
            if (!Files.exists(jar)) {
                continue;
            }
            built++;
            for (String classifier : List.of("sources", "javadoc")) {
                Path extra = target.resolve(m.artifactId() + "-" + v + "-" + classifier + ".jar");
                if (!Files.exists(extra)) {
                    missing.add(Docs.root().relativize(extra).toString());
                }
            }
        }
        assumeTrue(built > 0, "no module jar built yet (run ./mvnw verify, which packages before this test)");
        assertThat(missing).as("missing artifacts").isEmpty();
    }

    @Test
    void whatIsNotDeployedIsNotInstalledEither() throws Exception {
        Path root = Docs.root();
        NodeList modules = childElement(pom(root.resolve("pom.xml")).getDocumentElement(), "modules").getElementsByTagName("module");
        List<String> installedOnly = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (int i = 0; i < modules.getLength(); i++) {
            String dir = modules.item(i).getTextContent().trim();
            Element props = childElement(pom(root.resolve(dir).resolve("pom.xml")).getDocumentElement(), "properties");
            boolean noDeploy = props != null && "true".equals(child(props, "maven.deploy.skip"));
            boolean noInstall = props != null && "true".equals(child(props, "maven.install.skip"));
            if (noDeploy) {
                skipped.add(dir);
            }
            if (noDeploy && !noInstall) {
                installedOnly.add(dir);
            }
        }
        // ./mvnw install must put in the local repository what a release publishes, and nothing else.
        assertThat(skipped).contains("examples", "examples/consumer", "benchmarks", "docs");
        assertThat(installedOnly).as("modules that skip deploy but not install").isEmpty();
    }

    @Test
    void everyReactorPomIsAtTheProjectVersion() throws Exception {
        String v = version();
        Path root = Docs.root();
        NodeList modules = childElement(pom(root.resolve("pom.xml")).getDocumentElement(), "modules").getElementsByTagName("module");
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < modules.getLength(); i++) {
            Path p = root.resolve(modules.item(i).getTextContent().trim()).resolve("pom.xml");
            Element e = pom(p).getDocumentElement();
            if (child(e, "groupId") != null && !"dev.metrale".equals(child(e, "groupId"))) {
                continue; // a user's project in the reactor (examples/consumer) keeps its own coordinates
            }
            Element parent = childElement(e, "parent");
            String own = child(e, "version") != null ? child(e, "version") : parent == null ? null : child(parent, "version");
            if (!v.equals(own)) {
                wrong.add(root.relativize(p) + " has " + own);
            }
        }
        assertThat(wrong).as("every reactor pom is at the project's version " + v).isEmpty();
    }
}
