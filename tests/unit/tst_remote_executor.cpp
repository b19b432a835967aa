// The pieces of remote evaluation that need no remote machine: the tar stream the executors send is
// unpacked by the real tar (long names, empty files, executable bits); words quoted for the remote
// shell arrive unchanged through a real sh; the remote answer is checked as strictly as result.json.
#include "eval/remote_executor.h"
#include "eval/tar_writer.h"
#include "catalog/repository.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

class TestRemoteExecutor : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tarIsUnpackedByTar()
    {
        QTemporaryDir source;
        QTemporaryDir target;
        QVERIFY(source.isValid() && target.isValid());
        const QString deep = QStringLiteral(
            "a-directory-with-a-long-name-of-sixty-characters-0123456789ab/"
            "another-directory-with-a-long-name-of-fifty-chars/file-name-that-is-long.cpp");
        QVERIFY(QDir(source.path()).mkpath(QFileInfo(source.filePath(deep)).path()));
        const QMap<QString, QByteArray> files{{QStringLiteral("candidate.cpp"), "int main() { return 0; }\n"},
                                              {QStringLiteral("empty.txt"), QByteArray()},
                                              {QStringLiteral("sub/block.bin"), QByteArray(1537, '\x7f')},
                                              {deep, "deep\n"}};
        QVERIFY(QDir(source.path()).mkpath(QStringLiteral("sub")));
        for (auto it = files.cbegin(); it != files.cend(); ++it) {
            QFile f(source.filePath(it.key()));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(it.value());
        }
        QFile::setPermissions(source.filePath(QStringLiteral("candidate.cpp")),
                              QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        QVERIFY(QDir(source.path()).mkpath(QStringLiteral("empty-dir")));
        TarWriter tar;
        QVERIFY2(tar.addDirectory(source.path(), QStringLiteral("work")), qPrintable(tar.error()));
        const QByteArray archive = tar.finish();
        QCOMPARE(archive.size() % 512, 0);
        QProcess untar;
        untar.start(QStringLiteral("tar"),
                    {QStringLiteral("-xf"), QStringLiteral("-"), QStringLiteral("-C"), target.path()});
        untar.write(archive);
        untar.closeWriteChannel();
        QVERIFY(untar.waitForFinished(30000));
        QVERIFY2(untar.exitCode() == 0, untar.readAllStandardError().constData());
        for (auto it = files.cbegin(); it != files.cend(); ++it) {
            QFile f(target.filePath(QStringLiteral("work/") + it.key()));
            QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(it.key()));
            QCOMPARE(f.readAll(), it.value());
        }
        QVERIFY(QFileInfo(target.filePath(QStringLiteral("work/candidate.cpp"))).isExecutable());
        QVERIFY(!QFileInfo(target.filePath(QStringLiteral("work/empty.txt"))).isExecutable());
        QVERIFY(QFileInfo(target.filePath(QStringLiteral("work/empty-dir"))).isDir());
    }

    void tooLongANameIsAnError()
    {
        QTemporaryDir source;
        const QString name = QString(120, QLatin1Char('x'));
        QFile f(source.filePath(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        TarWriter tar;
        QVERIFY(!tar.addDirectory(source.path(), {}));
        QVERIFY(tar.error().contains(QLatin1String("too long")));
    }

    void quotedWordsSurviveTheShell_data()
    {
        QTest::addColumn<QString>("word");
        QTest::newRow("plain") << QStringLiteral("candidate.cpp");
        QTest::newRow("spaces") << QStringLiteral("a b  c");
        QTest::newRow("single quotes") << QStringLiteral("it's 'quoted'");
        QTest::newRow("shell syntax") << QStringLiteral("$(rm -rf /); `id` && echo $HOME > /dev/null | ; \\ \" *");
        QTest::newRow("newline") << QStringLiteral("two\nlines");
        QTest::newRow("empty") << QString();
    }

    void quotedWordsSurviveTheShell()
    {
        QFETCH(QString, word);
        QProcess sh;
        sh.start(QStringLiteral("sh"),
                 {QStringLiteral("-c"), QStringLiteral("printf %s ") + RemoteExecutor::shellQuote(word)});
        QVERIFY(sh.waitForFinished(10000));
        QCOMPARE(QString::fromUtf8(sh.readAllStandardOutput()), word);
    }

    void remoteAnswersAreChecked_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("status"); // empty: refused (a remote failure)
        QTest::addColumn<bool>("correct");
        QTest::newRow("correct") << QByteArray(
            R"({"status":"ok","correct":true,"metrics":{"latency_ms":{"median":1.5}},"steps":[{"name":"bench","exit_code":0,"log":"x"}]})")
                                 << QStringLiteral("ok") << true;
        QTest::newRow("incorrect") << QByteArray(R"({"status":"incorrect","correct":false,"log":"wrong at M=3"})")
                                   << QStringLiteral("incorrect") << false;
        QTest::newRow("ok but says not correct")
            << QByteArray(R"({"status":"ok","correct":false,"metrics":{}})") << QStringLiteral("ok") << false;
        QTest::newRow("an error of the far side's evaluator")
            << QByteArray(R"({"status":"error","correct":false})") << QStringLiteral("error") << false;
        QTest::newRow("correct without the metric")
            << QByteArray(R"({"status":"ok","correct":true,"metrics":{"gflops":3}})") << QString() << false;
        QTest::newRow("cancelled over there")
            << QByteArray(R"({"status":"cancelled","correct":false})") << QString() << false;
        QTest::newRow("unknown status") << QByteArray(R"({"status":"great","correct":true})") << QString() << false;
        QTest::newRow("correct not a boolean")
            << QByteArray(R"({"status":"ok","correct":"yes"})") << QString() << false;
    }

    void remoteAnswersAreChecked()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, status);
        QFETCH(bool, correct);
        QString error;
        const EvalResult r = RemoteExecutor::resultFromJson(QJsonDocument::fromJson(json).object(),
                                                            QStringLiteral("latency_ms"), &error);
        QCOMPARE(error.isEmpty(), !status.isEmpty());
        QCOMPARE(r.status, status);
        QCOMPARE(r.correct, correct);
        if (status == QLatin1String("ok") && correct) {
            QCOMPARE(r.metricValue(QStringLiteral("latency_ms")), 1.5);
            QCOMPARE(r.steps.size(), 1);
            QCOMPARE(r.steps.first().log, QStringLiteral("x"));
        }
    }

    // What a host gets of a target: unpacked by tar, it is a data directory the far side's repository
    // loads the same target and problem from.
    void dataArchiveIsADataDirectory_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("problem");
        QTest::newRow("cpu/gemm") << QStringLiteral("cpu") << QStringLiteral("gemm");
        QTest::newRow("rvv/saxpy (uses the cpu target's files)") << QStringLiteral("rvv") << QStringLiteral("saxpy");
    }

    void dataArchiveIsADataDirectory()
    {
        QFETCH(QString, target);
        QFETCH(QString, problem);
        Repository shipped;
        QString error;
        RemoteTask task;
        task.target = *shipped.target(target, &error);
        task.problem = *shipped.problem(target, problem, &error);
        QString hash;
        const QByteArray archive = RemoteExecutor::dataArchive(task, &hash, &error);
        QVERIFY2(!archive.isEmpty(), qPrintable(error));
        QCOMPARE(hash.size(), 16);
        QTemporaryDir dir;
        QProcess untar;
        untar.start(QStringLiteral("tar"),
                    {QStringLiteral("-xf"), QStringLiteral("-"), QStringLiteral("-C"), dir.path()});
        untar.write(archive);
        untar.closeWriteChannel();
        QVERIFY(untar.waitForFinished(30000));
        QVERIFY2(untar.exitCode() == 0, untar.readAllStandardError().constData());
        Repository remote({dir.path()});
        const auto t = remote.target(target, &error);
        QVERIFY2(t, qPrintable(error));
        QVERIFY(t->dir.startsWith(dir.path()));
        QCOMPARE(t->steps.size(), task.target.steps.size());
        const auto p = remote.problem(target, problem, &error);
        QVERIFY2(p, qPrintable(error));
        QCOMPARE(p->startCode(), task.problem.startCode());
    }

    // A problem whose problem.yaml names files outside its folder (what `autocomp problems import`
    // makes: `reference:` is the user's own file): the files go along, and the far side's copy of
    // problem.yaml names the copies, so nothing there reads a path of this machine.
    void dataArchiveCarriesFilesOutsideTheProblem_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("from");
        QTest::newRow("cpu, reference and context outside")
            << QStringLiteral("cpu") << QStringLiteral("transpose_ext") << QStringLiteral("cpu/transpose");
        QTest::newRow("kernelbench, imported (grouped name)")
            << QStringLiteral("kernelbench") << QStringLiteral("level1/9_Imported")
            << QStringLiteral("kernelbench/level1/1_NewGELU");
    }

    void dataArchiveCarriesFilesOutsideTheProblem()
    {
        QFETCH(QString, target);
        QFETCH(QString, problem);
        QFETCH(QString, from);
        QTemporaryDir data;
        QTemporaryDir user; // the user's own files, outside every data directory
        QVERIFY(data.isValid() && user.isValid());
        Repository shipped;
        QString error;
        const auto source = shipped.problem(target, from.section(QLatin1Char('/'), 1, -1), &error);
        QVERIFY2(source, qPrintable(error));
        const QString dir = data.filePath(QStringLiteral("sols/%1/%2").arg(target, problem));
        QVERIFY(QDir().mkpath(dir));
        QFile yaml(source->dir + QStringLiteral("/problem.yaml"));
        QVERIFY(yaml.open(QIODevice::ReadOnly));
        QByteArray text = yaml.readAll();
        for (const auto &[key, file] :
             {std::pair{"reference", source->referenceFile}, std::pair{"context", source->contextFile}}) {
            if (file.isEmpty())
                continue;
            const QString outside = user.filePath(QFileInfo(file).fileName());
            QVERIFY(QFile::copy(file, outside));
            const QByteArray line = QByteArray(key) + ": " + QFileInfo(file).fileName().toUtf8();
            QVERIFY2(text.contains(line), line.constData());
            text.replace(line, QByteArray(QByteArray(key) + ": " + outside.toUtf8()));
        }
        QVERIFY(QFile::copy(source->startFile, dir + QLatin1Char('/') + QFileInfo(source->startFile).fileName()));
        QFile copy(dir + QStringLiteral("/problem.yaml"));
        QVERIFY(copy.open(QIODevice::WriteOnly));
        copy.write(text.replace(QByteArray("name: " + from.section(QLatin1Char('/'), -1).toUtf8()),
                                QByteArray("name: " + problem.section(QLatin1Char('/'), -1).toUtf8())));
        copy.close();

        Repository local({data.path()});
        RemoteTask task;
        task.target = *shipped.target(target, &error);
        const auto loaded = local.problem(target, problem, &error);
        QVERIFY2(loaded, qPrintable(error));
        QVERIFY(loaded->referenceFile.startsWith(user.path()));
        task.problem = *loaded;
        QString hash;
        const QByteArray archive = RemoteExecutor::dataArchive(task, &hash, &error);
        QVERIFY2(!archive.isEmpty(), qPrintable(error));
        // The far side: the user's files are not there.
        QVERIFY(user.remove());
        QTemporaryDir remoteDir;
        QProcess untar;
        untar.start(QStringLiteral("tar"),
                    {QStringLiteral("-xf"), QStringLiteral("-"), QStringLiteral("-C"), remoteDir.path()});
        untar.write(archive);
        untar.closeWriteChannel();
        QVERIFY(untar.waitForFinished(30000));
        QVERIFY2(untar.exitCode() == 0, untar.readAllStandardError().constData());
        Repository remote({remoteDir.path()});
        const auto p = remote.problem(target, problem, &error);
        QVERIFY2(p, qPrintable(error));
        QCOMPARE(p->name, problem);
        QVERIFY2(p->referenceFile.startsWith(remoteDir.path() + QStringLiteral("/sols/")),
                 qPrintable(p->referenceFile));
        QFile shippedReference(p->referenceFile);
        QVERIFY(shippedReference.open(QIODevice::ReadOnly));
        QFile original(source->referenceFile);
        QVERIFY(original.open(QIODevice::ReadOnly));
        QCOMPARE(shippedReference.readAll(), original.readAll());
        QCOMPARE(p->context, source->context);
        QCOMPARE(p->startCode(), source->startCode());
        QCOMPARE(p->format, source->format);
        QCOMPARE(p->scale, source->scale);
    }

    // A GPU MODE problem's reference.py lives in the user's reference-kernels checkout and needs its
    // problem set (task.yml's ../eval.py, ../utils.py): with the gpumode target's reference_tree (2),
    // the folder above the task goes along, without .git or Python caches, and the far side's
    // problem.yaml names the reference in that copy; with reference_tree 0 only the file would.
    void dataArchiveCarriesTheReferenceTree()
    {
        QTemporaryDir data;
        QTemporaryDir user;
        QVERIFY(data.isValid() && user.isValid());
        auto write = [](const QString &path, const QByteArray &text) {
            QDir().mkpath(QFileInfo(path).absolutePath());
            QFile f(path);
            return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
        };
        const QString problems = user.filePath(QStringLiteral("reference-kernels/problems"));
        QVERIFY(write(problems + QStringLiteral("/eval.py"), "# the problem set's eval.py\n"));
        QVERIFY(write(problems + QStringLiteral("/utils.py"), "# helpers\n"));
        QVERIFY(
            write(problems + QStringLiteral("/echo/task.yml"), "files:\n  - {name: eval.py, source: ../eval.py}\n"));
        QVERIFY(write(problems + QStringLiteral("/echo/reference.py"), "def ref_kernel(data):\n    return data\n"));
        QVERIFY(write(problems + QStringLiteral("/echo/task.py"), "# types\n"));
        QVERIFY(write(problems + QStringLiteral("/other/reference.py"), "# another task of the set\n"));
        QVERIFY(write(problems + QStringLiteral("/.git/config"), "[core]\n"));
        QVERIFY(write(problems + QStringLiteral("/echo/__pycache__/reference.cpython-311.pyc"), "bytecode"));
        const QString dir = data.filePath(QStringLiteral("sols/gpumode/echo"));
        QVERIFY(write(dir + QStringLiteral("/submission.py"), "def custom_kernel(data):\n    return data\n"));
        QVERIFY(write(dir + QStringLiteral("/problem.yaml"),
                      QStringLiteral("name: echo\ndescription: identity\nreference: %1/echo/reference.py\n"
                                     "start: submission.py\nshapes: [{cases: 1}]\n")
                          .arg(problems)
                          .toUtf8()));
        Repository shipped;
        Repository local({data.path()});
        QString error;
        RemoteTask task;
        const auto target = shipped.target(QStringLiteral("gpumode"), &error);
        QVERIFY2(target, qPrintable(error));
        QCOMPARE(target->referenceTree, 2);
        task.target = *target;
        const auto loaded = local.problem(QStringLiteral("gpumode"), QStringLiteral("echo"), &error);
        QVERIFY2(loaded, qPrintable(error));
        task.problem = *loaded;
        QString hash;
        const QByteArray archive = RemoteExecutor::dataArchive(task, &hash, &error);
        QVERIFY2(!archive.isEmpty(), qPrintable(error));
        task.target.referenceTree = 0;
        QString fileOnlyHash;
        const QByteArray fileOnly = RemoteExecutor::dataArchive(task, &fileOnlyHash, &error);
        QVERIFY2(!fileOnly.isEmpty(), qPrintable(error));

        // A tree too large to send is an error that names the folder and the key (another problem of
        // the same set: archives are built once per process and problem).
        QVERIFY(write(problems + QStringLiteral("/big/weights.bin"), "x"));
        QFile big(problems + QStringLiteral("/big/weights.bin"));
        QVERIFY(big.resize(qint64(65) << 20)); // sparse
        QVERIFY(QDir().mkpath(data.filePath(QStringLiteral("sols/gpumode/echo2"))));
        QVERIFY(QFile::copy(dir + QStringLiteral("/submission.py"),
                            data.filePath(QStringLiteral("sols/gpumode/echo2/submission.py"))));
        QFile yaml(dir + QStringLiteral("/problem.yaml"));
        QVERIFY(yaml.open(QIODevice::ReadOnly));
        QVERIFY(write(data.filePath(QStringLiteral("sols/gpumode/echo2/problem.yaml")),
                      yaml.readAll().replace("name: echo\n", "name: echo2\n")));
        const auto second = local.problem(QStringLiteral("gpumode"), QStringLiteral("echo2"), &error);
        QVERIFY2(second, qPrintable(error));
        task.problem = *second;
        task.target.referenceTree = 2;
        QVERIFY(RemoteExecutor::dataArchive(task, &hash, &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("64 MiB")) && error.contains(problems)
                     && error.contains(QStringLiteral("reference_tree")),
                 qPrintable(error));
        QVERIFY(user.remove()); // the far side has none of the user's files

        auto unpack = [](const QByteArray &bytes, const QString &into) {
            QProcess untar;
            untar.start(QStringLiteral("tar"),
                        {QStringLiteral("-xf"), QStringLiteral("-"), QStringLiteral("-C"), into});
            untar.write(bytes);
            untar.closeWriteChannel();
            return untar.waitForFinished(30000) && untar.exitCode() == 0;
        };
        QTemporaryDir remoteDir;
        QVERIFY(unpack(archive, remoteDir.path()));
        Repository remote({remoteDir.path()});
        const auto p = remote.problem(QStringLiteral("gpumode"), QStringLiteral("echo"), &error);
        QVERIFY2(p, qPrintable(error));
        QVERIFY2(p->referenceFile.startsWith(remoteDir.path() + QStringLiteral("/sols/gpumode/echo/_external/")),
                 qPrintable(p->referenceFile));
        const QDir task_(QFileInfo(p->referenceFile).absolutePath());
        QVERIFY(task_.exists(QStringLiteral("task.yml")) && task_.exists(QStringLiteral("task.py")));
        const QDir set(QDir::cleanPath(p->referenceFile + QStringLiteral("/../.."))); // the worker's --task-root
        QVERIFY(set.exists(QStringLiteral("eval.py")) && set.exists(QStringLiteral("utils.py"))
                && set.exists(QStringLiteral("other/reference.py")));
        QVERIFY(!set.exists(QStringLiteral(".git")));
        QVERIFY(!task_.exists(QStringLiteral("__pycache__")));
        QCOMPARE(p->startCode(), loaded->startCode());

        QTemporaryDir fileOnlyDir;
        QVERIFY(unpack(fileOnly, fileOnlyDir.path()));
        const auto alone =
            Repository({fileOnlyDir.path()}).problem(QStringLiteral("gpumode"), QStringLiteral("echo"), &error);
        QVERIFY2(alone, qPrintable(error));
        QVERIFY(QFileInfo::exists(alone->referenceFile));
        QVERIFY(!QFileInfo::exists(QFileInfo(alone->referenceFile).absolutePath() + QStringLiteral("/task.yml")));
    }

    void configurationErrorsAreSaid()
    {
        EvaluationConfig config;
        config.executor = QStringLiteral("ssh");
        QString error;
        QVERIFY(!RemoteExecutor::create(config, &error));
        QVERIFY(error.contains(QLatin1String("evaluation.hosts")));
    }
};

QTEST_GUILESS_MAIN(TestRemoteExecutor)
#include "tst_remote_executor.moc"
