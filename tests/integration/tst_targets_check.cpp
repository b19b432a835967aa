// `autocomp targets check T` as a target's author runs it: real sandboxed evaluations of the cpu target's
// start code and its problems' checks/ files, a fixture target whose author got things wrong (each failure
// shown by file, and by line where the loader gives one), an absent target and an unknown one. Also the
// log of a judge that exits 1 after writing result.json: its verdict appears once, not twice.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>

class TestTargetsCheck : public QObject
{
    Q_OBJECT

    struct Outcome {
        int exitCode = -1;
        QString out;
        QString err;
    };

    static QString fixtureDir() { return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/targets_check"); }

    static Outcome runCli(const QStringList &arguments, const QString &dataDir = {})
    {
        QProcess cli;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        if (!dataDir.isEmpty())
            env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), dataDir);
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
        return QString(QStringLiteral("exit ") + QString::number(o.exitCode) + QStringLiteral("\nstdout:\n") + o.out + QStringLiteral("\nstderr:\n")
                       + o.err.right(3000))
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

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(qEnvironmentVariable("AUTOCOMP_CLI")).isExecutable(), "AUTOCOMP_CLI must name the autocomp binary");
    }

    // Two cpu problems with their checks: every start code is correct, every wrong_ file incorrect, every
    // broken_ file a compile error, and the command says so with exit status 0.
    void cpuTarget()
    {
        const Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("cpu"), QStringLiteral("--problem"),
                                  QStringLiteral("transpose"), QStringLiteral("--problem"), QStringLiteral("rmsnorm")});
        if (o.exitCode == 5)
            QSKIP(qPrintable(QStringLiteral("the cpu target is absent here: ") + o.out));
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        QVERIFY2(o.out.contains(QRegularExpression(QStringLiteral("^problem\\s+file\\s+expected\\s+got\\s+time\\s+result$"),
                                                   QRegularExpression::MultilineOption)),
                 describe(o).constData());
        const QList<std::tuple<QString, QString, QString>> expected{
            {QStringLiteral("transpose"), QStringLiteral("transpose_start.cpp"), QStringLiteral("ok")},
            {QStringLiteral("transpose"), QStringLiteral("checks/wrong_full_tiles_only.cpp"), QStringLiteral("incorrect")},
            {QStringLiteral("transpose"), QStringLiteral("checks/broken_undeclared.cpp"), QStringLiteral("compile_error")},
            {QStringLiteral("rmsnorm"), QStringLiteral("rmsnorm_start.cpp"), QStringLiteral("ok")},
            {QStringLiteral("rmsnorm"), QStringLiteral("checks/wrong_no_weight.cpp"), QStringLiteral("incorrect")},
            {QStringLiteral("rmsnorm"), QStringLiteral("checks/broken_syntax.cpp"), QStringLiteral("compile_error")}};
        for (const auto &[problem, file, status] : expected) {
            const QStringList cells = row(o, problem, file);
            QVERIFY2(cells.size() == 6, qPrintable(problem + QLatin1Char(' ') + file + QStringLiteral(": no row in\n") + o.out));
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
        const Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("checkbroken")}, fixtureDir());
        QVERIFY2(o.exitCode == 3, describe(o).constData());
        const QString sols = fixtureDir() + QStringLiteral("/sols/checkbroken/");
        QVERIFY2(o.out.contains(sols + QStringLiteral("badyaml/problem.yaml:4")) && o.out.contains(QLatin1String("shapez")), describe(o).constData());
        QCOMPARE(row(o, QStringLiteral("badyaml"), QStringLiteral("problem.yaml")).value(5), QStringLiteral("FAIL"));
        QCOMPARE(row(o, QStringLiteral("good"), QStringLiteral("start.sh")).value(5), QStringLiteral("ok"));
        QCOMPARE(row(o, QStringLiteral("good"), QStringLiteral("checks/wrong_caught.sh")).value(5), QStringLiteral("ok"));
        QCOMPARE(row(o, QStringLiteral("good"), QStringLiteral("checks/broken_syntax.sh")).value(5), QStringLiteral("ok"));
        const QStringList passes = row(o, QStringLiteral("good"), QStringLiteral("checks/wrong_passes.sh"));
        QCOMPARE(passes.value(3), QStringLiteral("ok"));
        QCOMPARE(passes.value(5), QStringLiteral("FAIL"));
        const QStringList compiles = row(o, QStringLiteral("good"), QStringLiteral("checks/broken_compiles.sh"));
        QCOMPARE(compiles.value(2), QStringLiteral("compile_error"));
        QCOMPARE(compiles.value(5), QStringLiteral("FAIL"));
        QCOMPARE(row(o, QStringLiteral("good"), QStringLiteral("checks/notes.txt")).value(5), QStringLiteral("FAIL"));
        // Each failure again under the table, with the file's full path.
        for (const QString &file : {QStringLiteral("good/checks/wrong_passes.sh"), QStringLiteral("good/checks/broken_compiles.sh"),
                                    QStringLiteral("good/checks/notes.txt")})
            QVERIFY2(o.out.contains(QStringLiteral("FAIL good ") + sols + file), qPrintable(file + QStringLiteral(" in\n") + o.out));
        QVERIFY2(o.out.contains(QLatin1String("checkbroken: 7 checks, 4 failed")), describe(o).constData());
    }

    void absentTarget()
    {
        const Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("checkabsent")}, fixtureDir());
        QVERIFY2(o.exitCode == 5, describe(o).constData());
        QVERIFY2(o.out.contains(QLatin1String("checkabsent: absent")) && o.out.contains(QLatin1String("autocomp-no-such-program")),
                 describe(o).constData());
    }

    void unknownTargetOrProblem()
    {
        Outcome o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("no-such-target")}, fixtureDir());
        QVERIFY2(o.exitCode == 1 && o.err.contains(QLatin1String("unknown target 'no-such-target'")), describe(o).constData());
        o = runCli({QStringLiteral("targets"), QStringLiteral("check"), QStringLiteral("checkbroken"), QStringLiteral("--problem"), QStringLiteral("nope")},
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
                                + QStringLiteral("/agents/checkbroken/rules.yaml:2: unknown key 'planing' (expected one of: general, planning, coding)")),
                 describe(o).constData());
        QVERIFY2(lines.contains(QStringLiteral("cpu")), describe(o).constData());
    }

    // A judge that prints its verdict and exits 1 after writing result.json: the log says it once.
    void judgeVerdictAppearsOnce()
    {
        const QString candidate = fixtureDir() + QStringLiteral("/sols/checkbroken/good/checks/wrong_caught.sh");
        const Outcome o = runCli({QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("checkbroken"), QStringLiteral("--problem"),
                                  QStringLiteral("good"), QStringLiteral("--code"), candidate, QStringLiteral("--no-baseline"), QStringLiteral("--json")},
                                 fixtureDir());
        QVERIFY2(o.exitCode == 3, describe(o).constData());
        const QJsonObject json = QJsonDocument::fromJson(o.out.toUtf8()).object();
        QCOMPARE(json.value(QStringLiteral("status")).toString(), QStringLiteral("incorrect"));
        QCOMPARE(json.value(QStringLiteral("log")).toString(), QStringLiteral("step 'judge' exited with status 1\nthe candidate says WRONG"));
    }
};

QTEST_GUILESS_MAIN(TestTargetsCheck)
#include "tst_targets_check.moc"
