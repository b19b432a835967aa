#include "cli_agents_import.h"

#include "agents/isa_filter.h"
#include "agents/prompt_builder.h"
#include "catalog/repository.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>

namespace autocomp::cli {

namespace {

// The files of the agent format (DESIGN.md §4; Autocomp's agent builder writes the same names).
const QStringList &agentFiles()
{
    static const QStringList s_files{QStringLiteral("agent_config.yaml"),     QStringLiteral("optimization_menu.yaml"),
                                     QStringLiteral("translation_menu.yaml"), QStringLiteral("rules.yaml"),
                                     QStringLiteral("architecture.md"),       QStringLiteral("isa_docs.md"),
                                     QStringLiteral("code_examples.md")};
    return s_files;
}

// What loadAgent() does not check: the markdown files are UTF-8 text, and every code block of
// code_examples.md is closed (a lone ``` at the end is only a note). Errors name the file and line.
QStringList checkTextFiles(const QString &dir, QStringList *notes)
{
    QStringList errors;
    for (const QString &file :
         {QStringLiteral("architecture.md"), QStringLiteral("isa_docs.md"), QStringLiteral("code_examples.md")}) {
        QFile f(dir + QLatin1Char('/') + file);
        if (!f.exists())
            continue;
        if (!f.open(QIODevice::ReadOnly)) {
            errors << QStringLiteral("%1: cannot read: %2").arg(f.fileName(), f.errorString());
            continue;
        }
        const QByteArray bytes = f.readAll();
        const QString text = QString::fromUtf8(bytes);
        if (text.contains(QChar::ReplacementCharacter) && !bytes.contains("\xEF\xBF\xBD")) {
            const qsizetype at = text.indexOf(QChar::ReplacementCharacter);
            errors << QStringLiteral("%1:%2: not UTF-8 text")
                          .arg(f.fileName())
                          .arg(text.left(at).count(QLatin1Char('\n')) + 1);
            continue;
        }
        if (bytes.contains('\0')) {
            errors << QStringLiteral("%1:%2: a NUL byte: not a text file")
                          .arg(f.fileName())
                          .arg(bytes.left(bytes.indexOf('\0')).count('\n') + 1);
            continue;
        }
        if (file == QLatin1String("code_examples.md")) {
            int openLine = 0;
            const QStringList lines = text.split(QLatin1Char('\n'));
            for (int i = 0; i < lines.size(); ++i)
                if (lines.at(i).trimmed().startsWith(QLatin1String("```")))
                    openLine = openLine ? 0 : i + 1;
            // A fence left open at the very end (Autocomp's tpu-v6e ends with a stray ```) loses nothing: a note.
            // One with text after it would swallow the examples that follow: an error.
            bool textAfter = false;
            for (int i = openLine; openLine && i < lines.size(); ++i)
                textAfter = textAfter || !lines.at(i).trimmed().isEmpty();
            if (openLine && textAfter)
                errors
                    << QStringLiteral("%1:%2: this code block is never closed (```)").arg(f.fileName()).arg(openLine);
            else if (openLine)
                *notes << QStringLiteral("%1:%2: a ``` at the end opens no code block; ignored")
                              .arg(f.fileName())
                              .arg(openLine);
        }
    }
    return errors;
}

// The targets an agent fits: the one its config names, else those whose name is one of the dash-separated
// words of the agent's name (demo-rvv: rvv), or that such a word stands for (saturn: rvv, trn2: trainium).
QStringList fittingTargets(const Agent &agent, const Repository &repository)
{
    const QStringList targets = repository.targetNames();
    if (!agent.target.isEmpty())
        return targets.contains(agent.target) ? QStringList{agent.target} : QStringList{};
    // Hardware words of Autocomp's built agents' names that name one of our targets otherwise called.
    static const QHash<QString, QString> s_aliases{{QStringLiteral("saturn"), QStringLiteral("rvv")},
                                                   {QStringLiteral("trn1"), QStringLiteral("trainium")},
                                                   {QStringLiteral("trn2"), QStringLiteral("trainium")},
                                                   {QStringLiteral("trn3"), QStringLiteral("trainium")}};
    QStringList out;
    const QStringList words = agent.name.toLower().split(QRegularExpression(QStringLiteral("[-_ .]")),
                                                         Qt::SkipEmptyParts);
    for (const QString &t : targets)
        if (words.contains(t.toLower()))
            out << t;
    for (const QString &word : words)
        if (const QString t = s_aliases.value(word); !t.isEmpty() && targets.contains(t) && !out.contains(t))
            out << t;
    return out;
}

bool copyAgent(const QString &from, const QString &to, QString *error)
{
    QDir().mkpath(to);
    for (const QFileInfo &info : QDir(from).entryInfoList(QDir::Files | QDir::NoDotAndDotDot)) {
        const QString dest = to + QLatin1Char('/') + info.fileName();
        QFile::remove(dest);
        if (!QFile::copy(info.absoluteFilePath(), dest)) {
            *error = QStringLiteral("cannot copy %1 to %2").arg(info.absoluteFilePath(), dest);
            return false;
        }
        QFile(dest).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup
                                   | QFileDevice::ReadOther);
    }
    return true;
}

QString previewPrompt(const Agent &agent, const Repository &repository, const QString &target, QString *about)
{
    QString error;
    Target t;
    Problem p;
    Candidate start;
    if (!target.isEmpty()) {
        if (const auto loaded = repository.target(target, &error))
            t = *loaded;
        const QStringList problems = repository.problemNames(target);
        if (!problems.isEmpty())
            if (const auto loaded = repository.problem(target, problems.first(), &error)) {
                p = *loaded;
                start.code = p.startCode();
                *about = QStringLiteral("%1/%2").arg(target, p.name);
            }
    }
    if (about->isEmpty()) {
        t.name = target.isEmpty() ? agent.name : target;
        t.language = QStringLiteral("c");
        p.name = QStringLiteral("example");
        p.description = QStringLiteral("(no problem of a fitting target: a placeholder)");
        start.code = QStringLiteral("void kernel(void) {}");
        *about = QStringLiteral("a placeholder problem");
    }
    PlanPromptInput in;
    in.agent = &agent;
    in.problem = &p;
    in.target = &t;
    in.parent = &start;
    for (int i = 0; i < agent.menu.size(); ++i)
        in.menu << MenuEntry{i + 1, agent.menu.at(i)};
    in.examples = agent.codeExamples;
    return PromptBuilder::planPrompt(in);
}

} // namespace

int agentsImport(const QString &dir, const QString &name, const QString &target, bool overwrite, QTextStream &out,
                 QTextStream &err)
{
    const QFileInfo info(dir);
    if (!info.isDir()) {
        err << "autocomp agents import: " << dir << ": no such folder\n";
        return 2;
    }
    const QString source = info.absoluteFilePath();
    QString error;
    // Every file, before anything is copied.
    const auto agent = Repository::loadAgent(source, &error);
    QStringList notes;
    QStringList errors = checkTextFiles(source, &notes);
    if (!agent)
        errors.prepend(error);
    if (!errors.isEmpty()) {
        for (const QString &e : std::as_const(errors))
            err << "autocomp agents import: " << e << '\n';
        err << "autocomp agents import: nothing was copied\n";
        return 1;
    }
    const QString agentName = !name.isEmpty() ? name : agent->name;
    static const QRegularExpression s_name(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9_.-]*$"));
    if (!s_name.match(agentName).hasMatch()) {
        err << "autocomp agents import: '" << agentName
            << "' is not an agent name (letters, digits, _ . -); give one with --name\n";
        return 2;
    }
    const QString dest = Repository::userDataDir() + QStringLiteral("/agents/") + agentName;
    if (QFileInfo::exists(dest) && !overwrite) {
        err << "autocomp agents import: " << dest
            << " exists; --overwrite replaces it, --name imports under another name\n";
        return 2;
    }
    if (QFileInfo(dest).canonicalFilePath() == QFileInfo(source).canonicalFilePath()) {
        err << "autocomp agents import: " << source << " is already the installed copy\n";
        return 2;
    }
    for (const QString &note : std::as_const(notes))
        out << "note: " << note << '\n';
    for (const QFileInfo &f : QDir(source).entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot))
        if (!agentFiles().contains(f.fileName()))
            out << "note: " << f.fileName() << " is not a file of the agent format; copied, not used\n";
    if (!copyAgent(source, dest, &error)) {
        err << "autocomp agents import: " << error << '\n';
        return 1;
    }
    auto installed = Repository::loadAgent(dest, &error);
    if (!installed) {
        err << "autocomp agents import: the copy does not load: " << error << '\n';
        return 1;
    }
    installed->name = agentName;
    out << "imported agent '" << agentName << "' into " << dest << '\n';
    out << "  optimization menu: " << installed->menu.size() << " strategies\n";
    out << "  translation menu: " << installed->translationMenu.size() << " strategies\n";
    out << "  rules: " << installed->rulesGeneral.size() << " general, " << installed->rulesPlanning.size()
        << " planning, " << installed->rulesCoding.size() << " coding\n";
    out << "  code examples: " << installed->codeExamples.size() << '\n';
    out << "  architecture: " << installed->architecture.size()
        << " characters; ISA docs: " << installed->isaDocs.size() << " characters in "
        << IsaFilter::parse(installed->isaDocs).size() << " sections\n";

    const Repository repository;
    QString fit = target;
    if (!fit.isEmpty() && !repository.targetNames().contains(fit)) {
        err << "autocomp agents import: --target " << fit
            << ": no such target (known: " << repository.targetNames().join(QLatin1String(", ")) << ")\n";
        return 2;
    }
    const QStringList fits = fit.isEmpty() ? fittingTargets(*installed, repository) : QStringList{fit};
    if (fits.isEmpty()) {
        out << "target: none of this workbench's targets (" << repository.targetNames().join(QLatin1String(", "))
            << ") matches its name or its config; run it with `agent: " << agentName
            << "` and the target of its hardware\n";
    } else {
        fit = fits.first();
        out << "target: fits '" << fit << "'"
            << (fits.size() > 1 ? QStringLiteral(" (also: %1)").arg(fits.mid(1).join(QLatin1String(", "))) : QString())
            << "; run it with `target: " << fit << "` and `agent: " << agentName << "`\n";
    }
    QString about;
    const QString prompt = previewPrompt(*installed, repository, fits.isEmpty() ? QString() : fit, &about);
    const QStringList lines = prompt.split(QLatin1Char('\n'));
    out << "prompt preview (a plan prompt for " << about << ", " << prompt.size() << " characters, first 24 lines):\n";
    for (const QString &line : lines.mid(0, 24))
        out << "  | " << line.left(160) << '\n';
    return 0;
}

} // namespace autocomp::cli
