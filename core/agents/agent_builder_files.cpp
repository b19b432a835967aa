#include "agents/agent_builder.h"

#include "catalog/repository.h"

#include <QDir>
#include <QFile>
#include <QSaveFile>

#include <yaml-cpp/yaml.h>

// The builder's last stage: the reduced answers written out as the agent's files and its
// agent_config.yaml (kept apart from the stages that collect documents and ask the model).

namespace autocomp {

namespace {

QStringList bulletLines(const QString &text)
{
    QStringList out;
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        const QString t = line.trimmed();
        if (t.startsWith(QLatin1String("- ")) || t.startsWith(QLatin1String("* ")))
            out << t.mid(2).trimmed();
    }
    return out;
}

std::string utf8(const QString &text) { return text.toStdString(); }

} // namespace

void AgentBuilder::writeFiles()
{
    m_total = 1;
    startStage(Stage::Writing);
    const auto stripFence = [](const QString &text) {
        // A whole answer wrapped in one fence is unwrapped.
        static const QRegularExpression s_fence(QStringLiteral("^```[a-zA-Z]*\\n([\\s\\S]*)\\n```$"));
        const QRegularExpressionMatch m = s_fence.match(text.trimmed());
        return m.hasMatch() && !m.captured(1).contains(QLatin1String("```")) ? m.captured(1) : text;
    };

    QHash<QString, QString> files;
    const QString architecture = stripFence(m_reduced.value(QStringLiteral("architecture")));
    files.insert(QStringLiteral("architecture.md"),
                 (architecture.isEmpty() ? QStringLiteral("No document described the hardware.") : architecture)
                     + QLatin1Char('\n'));

    QString isa = stripFence(m_reduced.value(QStringLiteral("isa")));
    if (isa.isEmpty())
        isa = QStringLiteral("## Programming interface\n\nNo document described the programming interface.");
    else if (!isa.startsWith(QLatin1String("## ")) && !isa.contains(QLatin1String("\n## ")))
        isa = QStringLiteral("## Programming interface\n\n") + isa; // the run-time filter needs ## sections
    files.insert(QStringLiteral("isa_docs.md"), isa + QLatin1Char('\n'));

    QStringList menu = genericStrategies();
    QStringList extracted;
    for (const QString &strategy : bulletLines(m_reduced.value(QStringLiteral("optimization")))) {
        const bool known = std::any_of(menu.cbegin(), menu.cend(),
                                       [&](const QString &m) { return m.compare(strategy, Qt::CaseInsensitive) == 0; });
        if (!strategy.isEmpty() && !known) {
            menu << strategy;
            extracted << strategy;
        }
    }
    {
        YAML::Emitter out;
        out << YAML::BeginMap << YAML::Key << "optimizations" << YAML::Value << YAML::BeginSeq;
        for (const QString &strategy : std::as_const(menu))
            out << YAML::BeginMap << YAML::Key << "strategy" << YAML::Value << YAML::DoubleQuoted << utf8(strategy)
                << YAML::EndMap;
        out << YAML::EndSeq << YAML::EndMap;
        files.insert(QStringLiteral("optimization_menu.yaml"), QString::fromStdString(out.c_str()) + QLatin1Char('\n'));
    }

    {
        QHash<QString, QStringList> rules;
        QString section = QStringLiteral("general");
        for (const QString &line : m_reduced.value(QStringLiteral("rules")).split(QLatin1Char('\n'))) {
            const QString t = line.trimmed().toLower();
            if (t.startsWith(QLatin1String("general")) || t.startsWith(QLatin1String("planning"))
                || t.startsWith(QLatin1String("coding"))) {
                section = t.section(QLatin1Char(':'), 0, 0).remove(QLatin1Char('#')).remove(QLatin1Char('*')).trimmed();
                continue;
            }
            const QStringList bullet = bulletLines(line);
            if (!bullet.isEmpty())
                rules[section] << bullet.first();
        }
        YAML::Emitter out;
        out << YAML::BeginMap;
        for (const char *key : {"general", "planning", "coding"}) {
            out << YAML::Key << key << YAML::Value << YAML::BeginSeq;
            for (const QString &rule : rules.value(QLatin1String(key)))
                out << YAML::DoubleQuoted << utf8(rule);
            out << YAML::EndSeq;
        }
        out << YAML::EndMap;
        files.insert(QStringLiteral("rules.yaml"), QString::fromStdString(out.c_str()) + QLatin1Char('\n'));
    }

    const QString examples = m_reduced.value(QStringLiteral("examples"));
    files.insert(QStringLiteral("code_examples.md"), examples.isEmpty() ? QString() : examples + QLatin1Char('\n'));

    {
        YAML::Emitter out;
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << utf8(m_options.name);
        out << YAML::Key << "agent_name" << YAML::Value << utf8(m_options.name);
        out << YAML::Key << "version" << YAML::Value << "1";
        if (!m_options.target.isEmpty())
            out << YAML::Key << "target" << YAML::Value << utf8(m_options.target);
        out << YAML::Key << "description" << YAML::Value
            << utf8(QStringLiteral("Built from %1 document(s)%2")
                        .arg(m_kept.size())
                        .arg(m_options.scope.isEmpty() ? QString() : QStringLiteral(" for: ") + m_options.scope));
        out << YAML::Key << "built_at" << YAML::Value << utf8(QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
        out << YAML::Key << "models" << YAML::Value << YAML::BeginMap << YAML::Key << "builder" << YAML::Value
            << utf8(m_options.model) << YAML::EndMap;
        out << YAML::Key << "scope" << YAML::Value << utf8(m_options.scope);
        out << YAML::Key << "budget_chars" << YAML::Value << m_options.budgetChars;
        out << YAML::Key << "sources" << YAML::Value << YAML::BeginSeq;
        for (const AgentSourceDocument &d : std::as_const(m_plan.documents)) {
            out << YAML::BeginMap << YAML::Key << "source" << YAML::Value << utf8(d.source) << YAML::Key << "kind"
                << YAML::Value << utf8(d.kind) << YAML::Key << "used_for" << YAML::Value
                << utf8(m_routes.value(d.source, QStringLiteral("left out"))) << YAML::EndMap;
        }
        out << YAML::EndSeq;
        out << YAML::Key << "extracted_strategies" << YAML::Value << int(extracted.size());
        out << YAML::EndMap;
        files.insert(QStringLiteral("agent_config.yaml"), QString::fromStdString(out.c_str()) + QLatin1Char('\n'));
    }

    const QString dir = outDir();
    if (!QDir().mkpath(dir)) {
        fail(QStringLiteral("%1: cannot be created").arg(dir));
        return;
    }
    for (auto it = files.cbegin(); it != files.cend(); ++it) {
        const QString path = dir + QLatin1Char('/') + it.key();
        if (it.value().isEmpty()) {
            QFile::remove(path); // no examples: no file, as Autocomp leaves it
            continue;
        }
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(it.value().toUtf8()) < 0 || !file.commit()) {
            fail(QStringLiteral("%1: %2").arg(path, file.errorString()));
            return;
        }
    }
    QString error;
    if (!Repository::loadAgent(dir, &error)) {
        fail(QStringLiteral("the written agent does not load: %1").arg(error));
        return;
    }
    m_files = files;
    m_stage = Stage::Done;
    Q_EMIT stageChanged(m_stage, 0);
    Q_EMIT logLine(
        QStringLiteral("wrote %1 (%2 menu items, %3 extracted)").arg(dir).arg(menu.size()).arg(extracted.size()));
    Q_EMIT finished(dir);
}

} // namespace autocomp
