// `autocomp targets check T` as a target's author runs it: real sandboxed evaluations of the cpu target's
// start code and its problems' checks/ files, a fixture target whose author got things wrong (each failure
// shown by file, and by line where the loader gives one), an absent target and an unknown one. Also the
// log of a judge that exits 1 after writing result.json: its verdict appears once, not twice. And the
// worked example of backends/README.md (tests/integration/data/kit_example): a C target written with the
// C/C++ judge kit, checked beside the shipped kit, whose change rebuilds the judge.
#include <QDirIterator>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>

class TestTargetsCheck : public QObject
{
    Q_OBJECT

    struct Outcome
    {
        int exitCode = -1;
        QString out;
        QString err;
    };

    static QString fixtureDir()
    {
        return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/targets_check");
    }

    static Outcome runCli(const QStringList &arguments, const QString &dataDir = {}, const QString &xdgDataHome = {})
    {
        QProcess cli;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        if (!dataDir.isEmpty())
            env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), dataDir);
        if (!xdgDataHome.isEmpty())
            env.insert(QStringLiteral("XDG_DATA_HOME"), xdgDataHome);
        cli.setProcessEnvironment(env);
        cli.start(qEnvironmentVariable("AUTOCOMP_CLI"), arguments);
        Outcome o;
        if (!cli.waitForFinished(900000)) {
            cli.kill();
            cli.waitForFinished();
            return o;
        }
        o.exitCode = cli.exitStatus() == QProcess::NormalExit ? cli.exitCode() : -1;
        o.out = QString::fromUtf8(cli.readAllStandardOutput());
        o.err = QString::fromUtf8(cli.readAllStandardError());
        return o;
    }

    static QByteArray describe(const Outcome &o)
    {
        return QString(QStringLiteral("exit ") + QString::number(o.exitCode) + QStringLiteral("\nstdout:\n") + o.out
                       + QStringLiteral("\nstderr:\n") + o.err.right(3000))
            .toUtf8();
    }

    // The table row of (problem, file): its cells, split on runs of spaces.
    static QStringList row(const Outcome &o, const QString &problem, const QString &file)
    {
        static const QRegularExpression s_gap(QStringLiteral("\\s{2,}"));
        for (const QString &line : o.out.split(QLatin1Char('\n'))) {
            const QStringList cells = line.split(s_gap);
            if (cells.size() >= 5 && cells.at(0) == problem && cells.at(1) == file)
                return cells;
        }
        return {};
    }

    // Copies the tree `from` to `to` (files and folders, links followed).
    static bool copyTree(const QString &from, const QString &to)
    {
        QDirIterator it(from, QDir::Files | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString file = it.next();
            const QString target = to + QLatin1Char('/') + QDir(from).relativeFilePath(file);
            if (!QDir().mkpath(QFileInfo(target).path()) || !QFile::copy(file, target))
                return false;
        }
        return true;
    }

    // The judge cores the kit-c target has built into the per-machine cache: one per {backend_hash}.
    static QStringList kitCores()
    {
        const QString cache = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation)
            + QStringLiteral("/autocomp-workbench");
        return QDir(cache).entryList({QStringLiteral("kit-c-core-*.o")}, QDir::Files);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(qEnvironmentVariable("AUTOCOMP_CLI")).isExecutable(),
                 "AUTOCOMP_CLI must name the autocomp binary");
    }

    // Two cpu problems with their checks: every start code is correct, every wrong_ file incorrect, every
    // broken_ file a compile error, and the command says so with exit status 0.
    void cpuTarget()
    {
        const Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("cpu"),
                                  QStringLiteral("--problem"), QStringLiteral("transpose"), QStringLiteral("--problem"),
                                  QStringLiteral("rmsnorm")});
        if (o.exitCode == 5)
            QSKIP(qPrintable(QStringLiteral("the cpu target is absent here: ") + o.out));
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        QVERIFY2(
            o.out.contains(QRegularExpression(QStringLiteral("^problem\\s+file\\s+expected\\s+got\\s+time\\s+result$"),
                                              QRegularExpression::MultilineOption)),
            describe(o).constData());
        const QList<std::tuple<QString, QString, QString>> expected{
            {QStringLiteral("transpose"), QStringLiteral("transpose_start.cpp"), QStringLiteral("ok")},
            {QStringLiteral("transpose"), QStringLiteral("checks/wrong_full_tiles_only.cpp"),
             QStringLiteral("incorrect")},
            {QStringLiteral("transpose"), QStringLiteral("checks/broken_undeclared.cpp"),
             QStringLiteral("compile_error")},
            {QStringLiteral("rmsnorm"), QStringLiteral("rmsnorm_start.cpp"), QStringLiteral("ok")},
            {QStringLiteral("rmsnorm"), QStringLiteral("checks/wrong_no_weight.cpp"), QStringLiteral("incorrect")},
            {QStringLiteral("rmsnorm"), QStringLiteral("checks/broken_syntax.cpp"), QStringLiteral("compile_error")}};
        for (const auto &[problem, file, status] : expected) {
            const QStringList cells = row(o, problem, file);
            QVERIFY2(cells.size() == 6,
                     qPrintable(problem + QLatin1Char(' ') + file + QStringLiteral(": no row in\n") + o.out));
            QCOMPARE(cells.at(2), status);
            QCOMPARE(cells.at(3), status);
            QVERIFY2(cells.at(4).endsWith(QLatin1String(" s")), qPrintable(cells.join(QLatin1Char('|'))));
            QCOMPARE(cells.at(5), QStringLiteral("ok"));
        }
        QVERIFY2(o.out.contains(QLatin1String("cpu: 6 checks, 0 failed")), describe(o).constData());
        // Only the problems asked for.
        QVERIFY2(row(o, QStringLiteral("gemm"), QStringLiteral("gemm_start.cpp")).isEmpty(), describe(o).constData());
    }

    // The fixture's failures: a problem.yaml with an unknown key (file and line), a wrong_ file the judge
    // passes, a broken_ file that compiles, a check named neither way; its correct rows stay ok.
    void brokenTarget()
    {
        const Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("checkbroken")},
                                 fixtureDir());
        QVERIFY2(o.exitCode == 3, describe(o).constData());
        const QString sols = fixtureDir() + QStringLiteral("/sols/checkbroken/");
        QVERIFY2(o.out.contains(sols + QStringLiteral("badyaml/problem.yaml:4"))
                     && o.out.contains(QLatin1String("shapez")),
                 describe(o).constData());
        QCOMPARE(row(o, QStringLiteral("badyaml"), QStringLiteral("problem.yaml")).value(5), QStringLiteral("FAIL"));
        QCOMPARE(row(o, QStringLiteral("good"), QStringLiteral("start.sh")).value(5), QStringLiteral("ok"));
        QCOMPARE(row(o, QStringLiteral("good"), QStringLiteral("checks/wrong_caught.sh")).value(5),
                 QStringLiteral("ok"));
        QCOMPARE(row(o, QStringLiteral("good"), QStringLiteral("checks/broken_syntax.sh")).value(5),
                 QStringLiteral("ok"));
        const QStringList passes = row(o, QStringLiteral("good"), QStringLiteral("checks/wrong_passes.sh"));
        QCOMPARE(passes.value(3), QStringLiteral("ok"));
        QCOMPARE(passes.value(5), QStringLiteral("FAIL"));
        const QStringList compiles = row(o, QStringLiteral("good"), QStringLiteral("checks/broken_compiles.sh"));
        QCOMPARE(compiles.value(2), QStringLiteral("compile_error"));
        QCOMPARE(compiles.value(5), QStringLiteral("FAIL"));
        QCOMPARE(row(o, QStringLiteral("good"), QStringLiteral("checks/notes.txt")).value(5), QStringLiteral("FAIL"));
        // Each failure again under the table, with the file's full path.
        for (const QString &file :
             {QStringLiteral("good/checks/wrong_passes.sh"), QStringLiteral("good/checks/broken_compiles.sh"),
              QStringLiteral("good/checks/notes.txt")})
            QVERIFY2(o.out.contains(QStringLiteral("FAIL good ") + sols + file),
                     qPrintable(file + QStringLiteral(" in\n") + o.out));
        QVERIFY2(o.out.contains(QLatin1String("checkbroken: 7 checks, 4 failed")), describe(o).constData());
    }

    // The worked example: the fixture's target in a data directory that brings its own copy of the kit
    // (backends/common, which {kit_dir} then names), as a target author writes one. Its start code is ok, its wrong_
    // check incorrect, its broken_ check a compile error; its judge is the kit plus fewer than 80 lines of its own.
    // Editing a kit file changes {backend_hash}: the next evaluation builds a new judge core instead of using the
    // cached one.
    void kitExample()
    {
        QTemporaryDir data;
        QVERIFY(data.isValid());
        const QString fixture = qEnvironmentVariable("AUTOCOMP_TEST_DATA")
            + QStringLiteral("/integration/data/kit_example");
        QVERIFY(copyTree(fixture, data.path()));
        QVERIFY(copyTree(qEnvironmentVariable("AUTOCOMP_DATA_DIR") + QStringLiteral("/backends/common"),
                         data.filePath(QStringLiteral("backends/common"))));

        int ownLines = 0;
        for (const QString &file : {QStringLiteral("harness.cpp"), QStringLiteral("saxpy_reference.cpp")}) {
            QFile f(data.filePath(QStringLiteral("sols/kit-c/saxpy/") + file));
            QVERIFY(f.open(QIODevice::ReadOnly));
            ownLines += f.readAll().count('\n');
        }
        QVERIFY2(ownLines < 80, qPrintable(QString::number(ownLines)));
        // backends/README.md ("A worked example: writing a target with the kit") quotes these files whole: it cannot
        // drift from them.
        QFile readme(qEnvironmentVariable("AUTOCOMP_DATA_DIR") + QStringLiteral("/backends/README.md"));
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QByteArray readmeText = readme.readAll();
        for (const QString &file : {QStringLiteral("harness.cpp"), QStringLiteral("saxpy_reference.cpp"),
                                    QStringLiteral("problem.yaml"), QStringLiteral("saxpy_start.c")}) {
            QFile f(data.filePath(QStringLiteral("sols/kit-c/saxpy/") + file));
            QVERIFY(f.open(QIODevice::ReadOnly));
            QVERIFY2(readmeText.contains(f.readAll()),
                     qPrintable(file + QStringLiteral(" is not quoted whole in backends/README.md")));
        }
        QFile backendYaml(data.filePath(QStringLiteral("backends/kit-c/backend.yaml")));
        QVERIFY(backendYaml.open(QIODevice::ReadOnly));
        QVERIFY2(readmeText.contains(backendYaml.readAll()), "backend.yaml is not quoted whole in backends/README.md");

        const Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("kit-c")},
                                 data.path());
        if (o.exitCode == 5)
            QSKIP(qPrintable(QStringLiteral("the kit-c target is absent here: ") + o.out));
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        const QList<std::pair<QString, QString>> expected{
            {QStringLiteral("saxpy_start.c"), QStringLiteral("ok")},
            {QStringLiteral("checks/wrong_last_element.c"), QStringLiteral("incorrect")},
            {QStringLiteral("checks/broken_missing_brace.c"), QStringLiteral("compile_error")}};
        for (const auto &[file, status] : expected) {
            const QStringList cells = row(o, QStringLiteral("saxpy"), file);
            QVERIFY2(cells.size() == 6, qPrintable(file + QStringLiteral(": no row in\n") + o.out));
            QCOMPARE(cells.at(3), status);
            QCOMPARE(cells.at(5), QStringLiteral("ok"));
        }
        QVERIFY2(o.out.contains(QLatin1String("kit-c: 3 checks, 0 failed")), describe(o).constData());

        // A change to the kit (a comment in one of its headers) rebuilds the judge core.
        const QStringList before = kitCores();
        QVERIFY2(!before.isEmpty(), "targets check built no kit-c judge core");
        QFile header(data.filePath(QStringLiteral("backends/common/include/autocomp/stats.h")));
        QVERIFY(header.open(QIODevice::Append));
        header.write(QStringLiteral("// edited by tst_targets_check %1 %2\n")
                         .arg(QCoreApplication::applicationPid())
                         .arg(QDateTime::currentMSecsSinceEpoch())
                         .toUtf8());
        header.close();
        const Outcome again = runCli({QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("kit-c"),
                                      QStringLiteral("--problem"), QStringLiteral("saxpy"), QStringLiteral("--code"),
                                      data.filePath(QStringLiteral("sols/kit-c/saxpy/checks/wrong_last_element.c")),
                                      QStringLiteral("--no-baseline"), QStringLiteral("--json")},
                                     data.path());
        QVERIFY2(again.exitCode == 3, describe(again).constData());
        QCOMPARE(QJsonDocument::fromJson(again.out.toUtf8()).object().value(QStringLiteral("status")).toString(),
                 QStringLiteral("incorrect"));
        const QStringList after = kitCores();
        QVERIFY2(after.size() == before.size() + 1,
                 qPrintable(before.join(QLatin1Char(' ')) + QStringLiteral(" -> ") + after.join(QLatin1Char(' '))));
    }

    // The worked example where a user keeps their own targets: the user's data directory
    // ($XDG_DATA_HOME/autocomp-workbench), with no copy of the kit there. {kit_dir} reaches the shipped kit.
    void kitExampleInUserDataDir()
    {
        QTemporaryDir home;
        QVERIFY(home.isValid());
        const QString userData = home.filePath(QStringLiteral("autocomp-workbench"));
        QVERIFY(copyTree(qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/kit_example"),
                         userData));
        QVERIFY(!QFileInfo::exists(userData + QStringLiteral("/backends/common")));
        const Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("kit-c")}, {},
                                 home.path());
        if (o.exitCode == 5)
            QSKIP(qPrintable(QStringLiteral("the kit-c target is absent here: ") + o.out));
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        QCOMPARE(row(o, QStringLiteral("saxpy"), QStringLiteral("saxpy_start.c")).value(3), QStringLiteral("ok"));
        QVERIFY2(o.out.contains(QLatin1String("kit-c: 3 checks, 0 failed")), describe(o).constData());
    }

    void absentTarget()
    {
        const Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("checkabsent")},
                                 fixtureDir());
        QVERIFY2(o.exitCode == 5, describe(o).constData());
        QVERIFY2(o.out.contains(QLatin1String("checkabsent: absent"))
                     && o.out.contains(QLatin1String("autocomp-no-such-program")),
                 describe(o).constData());
    }

    void unknownTargetOrProblem()
    {
        Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("no-such-target")},
                           fixtureDir());
        QVERIFY2(o.exitCode == 1 && o.err.contains(QLatin1String("unknown target 'no-such-target'")),
                 describe(o).constData());
        o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("checkbroken"),
                    QStringLiteral("--problem"), QStringLiteral("nope")},
                   fixtureDir());
        QVERIFY2(o.exitCode == 1 && o.err.contains(QLatin1String("no problem 'nope'")), describe(o).constData());
    }

    // `autocomp agents` loads each agent: the fixture's misspelt rules.yaml key is listed with file and line,
    // a shipped agent that loads is listed by its name alone.
    void agentsListsBrokenAgent()
    {
        const Outcome o = runCli({QStringLiteral("agents")}, fixtureDir());
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        const QStringList lines = o.out.split(QLatin1Char('\n'));
        QVERIFY2(lines.contains(QStringLiteral("checkbroken  broken: ") + fixtureDir()
                                + QStringLiteral("/agents/checkbroken/rules.yaml:2: unknown key 'planing' (expected "
                                                 "one of: general, planning, coding)")),
                 describe(o).constData());
        QVERIFY2(lines.contains(QStringLiteral("cpu")), describe(o).constData());
    }

    // A judge that prints its verdict and exits 1 after writing result.json: the log says it once.
    void judgeVerdictAppearsOnce()
    {
        const QString candidate = fixtureDir() + QStringLiteral("/sols/checkbroken/good/checks/wrong_caught.sh");
        const Outcome o = runCli({QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("checkbroken"),
                                  QStringLiteral("--problem"), QStringLiteral("good"), QStringLiteral("--code"),
                                  candidate, QStringLiteral("--no-baseline"), QStringLiteral("--json")},
                                 fixtureDir());
        QVERIFY2(o.exitCode == 3, describe(o).constData());
        const QJsonObject json = QJsonDocument::fromJson(o.out.toUtf8()).object();
        QCOMPARE(json.value(QStringLiteral("status")).toString(), QStringLiteral("incorrect"));
        QCOMPARE(json.value(QStringLiteral("log")).toString(),
                 QStringLiteral("step 'judge' exited with status 1\nthe candidate says WRONG"));
    }
};

QTEST_GUILESS_MAIN(TestTargetsCheck)
#include "tst_targets_check.moc"
