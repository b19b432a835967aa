// The agent editor lists an agent that fails to load as broken, with the loader's file and line, and says
// so when it is picked, instead of listing it like the others.
#include "editors/agent_editor.h"
#include "catalog/repository.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

namespace {

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(bytes) == bytes.size();
}

} // namespace

class TestAgentEditor : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void brokenAgentIsMarked()
    {
        QTemporaryDir data;
        QVERIFY(data.isValid());
        for (const char *name : {"good", "bad"}) {
            const QString dir = data.filePath(QStringLiteral("agents/") + QLatin1String(name));
            QVERIFY(writeFile(dir + QStringLiteral("/agent_config.yaml"), QByteArray("name: ") + name + "\n"));
            QVERIFY(writeFile(dir + QStringLiteral("/optimization_menu.yaml"),
                              "optimizations:\n  - strategy: \"tile the loops\"\n"));
        }
        QVERIFY(writeFile(data.filePath(QStringLiteral("agents/bad/rules.yaml")),
                          "general: [\"a rule\"]\nplaning: [\"misspelt\"]\n"));

        AgentEditor editor(Repository(QStringList{data.path()}));
        auto *combo = editor.findChild<QComboBox *>(QStringLiteral("agentCombo"));
        QVERIFY(combo);
        const int good = combo->findText(QStringLiteral("good"));
        const int bad = combo->findText(QStringLiteral("bad"));
        QVERIFY(good >= 0 && bad >= 0);
        QVERIFY(combo->itemData(good, AgentEditor::BrokenRole).toString().isEmpty());
        QVERIFY(combo->itemIcon(good).isNull());
        const QString why = combo->itemData(bad, AgentEditor::BrokenRole).toString();
        QVERIFY2(why.contains(data.filePath(QStringLiteral("agents/bad/rules.yaml:2")))
                     && why.contains(QLatin1String("planing")),
                 qPrintable(why + QStringLiteral(" / tooltip: ") + combo->itemData(bad, Qt::ToolTipRole).toString()));
        QVERIFY(!combo->itemIcon(bad).isNull());
        QVERIFY(combo->itemData(bad, Qt::ToolTipRole).toString().startsWith(QLatin1String("broken: ")));

        combo->setCurrentIndex(bad);
        auto *validation = editor.findChild<QLabel *>(QStringLiteral("agentValidation"));
        QVERIFY(validation);
        QVERIFY2(validation->text().contains(QLatin1String("Agent 'bad' is broken"))
                     && validation->text().contains(QLatin1String("rules.yaml:2")),
                 qPrintable(validation->text()));
    }
};

QTEST_MAIN(TestAgentEditor)
#include "tst_agent_editor.moc"
