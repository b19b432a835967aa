#include "eval/remote_executor.h"

#include "eval/slurm_executor.h"
#include "eval/ssh_executor.h"
#include "eval/tar_writer.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QMutex>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

namespace autocomp {

namespace {

// The folder a reference needs around it (a GPU MODE problem set: its tasks, eval.py, utils.py), as
// `name` in the archive: regular files only, without version control or Python caches, and no more
// than 64 MiB (a reference_tree that reaches a home directory or a whole checkout is a mistake).
bool addReferenceTree(TarWriter &tar, const QString &tree, const QString &name, QString *error)
{
    constexpr qint64 MaxBytes = qint64(64) << 20;
    if (tree == QLatin1String("/") || tree == QDir::homePath() || !QFileInfo(tree).isDir()) {
        *error = QStringLiteral("%1 is not a folder to send").arg(tree);
        return false;
    }
    const QDir root(tree);
    QStringList files;
    qint64 bytes = 0;
    QDirIterator it(tree, QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QString relative = root.relativeFilePath(path);
        const QStringList parts = relative.split(QLatin1Char('/'));
        if (parts.contains(QLatin1String(".git")) || parts.contains(QLatin1String("__pycache__"))
            || relative.endsWith(QLatin1String(".pyc")))
            continue;
        bytes += it.fileInfo().size();
        if (bytes > MaxBytes) {
            *error = QStringLiteral("more than %1 MiB of files to send").arg(MaxBytes >> 20);
            return false;
        }
        files << relative;
    }
    files.sort();
    for (const QString &relative : std::as_const(files)) {
        if (!tar.addFile(root.filePath(relative), name + QLatin1Char('/') + relative)) {
            *error = tar.error();
            return false;
        }
    }
    return true;
}

} // namespace

std::unique_ptr<RemoteExecutor> RemoteExecutor::create(const EvaluationConfig &config, QString *error)
{
    if (config.executor == QLatin1String("ssh")) {
        if (config.hosts.isEmpty()) {
            *error = QStringLiteral("evaluation.executor is ssh but evaluation.hosts names no host");
            return nullptr;
        }
        return std::make_unique<SshExecutor>(config);
    }
    if (config.executor == QLatin1String("slurm"))
        return SlurmExecutor::create(config, error);
    *error = QStringLiteral("unknown executor '%1'").arg(config.executor);
    return nullptr;
}

QList<RemoteAttempt *> RemoteExecutor::startBatch(int slot, const QList<RemoteTask> &tasks)
{
    QList<RemoteAttempt *> attempts;
    for (const RemoteTask &task : tasks)
        attempts << start(slot, task);
    return attempts;
}

QString RemoteExecutor::shellQuote(const QString &word)
{
    QString quoted = word;
    quoted.replace(QLatin1Char('\''), QLatin1String("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

QStringList RemoteExecutor::remoteEvalCommand(const EvaluationConfig &config, const RemoteTask &task,
                                              const QString &remoteDir)
{
    const QString work = remoteDir + QStringLiteral("/work/");
    QStringList command{config.remoteCommand,     QStringLiteral("eval"),      QStringLiteral("--target"),
                        task.target.name,         QStringLiteral("--problem"), task.problem.name,
                        QStringLiteral("--code"), work + task.candidateName,   QStringLiteral("--json")};
    if (task.baselineName.isEmpty())
        command << QStringLiteral("--no-baseline");
    else
        command << QStringLiteral("--baseline") << work + task.baselineName;
    if (!task.fromStep.isEmpty())
        command << QStringLiteral("--from-step") << task.fromStep << QStringLiteral("--seed-dir")
                << remoteDir + QStringLiteral("/work");
    if (task.profile)
        command << QStringLiteral("--profile");
    return command;
}

QByteArray RemoteExecutor::dataArchive(const RemoteTask &task, QString *hash, QString *error)
{
    // Built once per process and (target, problem), like the sources hash: the far side keeps the
    // data under its hash, so a judge built there from it is reused by every later candidate.
    static QMutex s_mutex;
    static QHash<QString, std::pair<QString, QByteArray>> s_archives;
    const QString key = task.target.dir + QLatin1Char('|') + task.problem.dir + QLatin1Char('|')
        + QString::number(task.target.referenceTree);
    QMutexLocker lock(&s_mutex);
    if (const auto it = s_archives.constFind(key); it != s_archives.cend()) {
        *hash = it->first;
        return it->second;
    }
    const QFileInfo targetDir(task.target.dir);
    const QFileInfo problemDir(task.problem.dir);
    if (!targetDir.isDir() || !problemDir.isDir()) {
        *error = QStringLiteral("the target '%1' or the problem '%2' has no directory to send")
                     .arg(task.target.name, task.problem.name);
        return {};
    }
    TarWriter tar;
    // Every target folder beside this one: a target may use another's files ({backend_dir}/../cpu/include).
    const QDir backends = targetDir.dir();
    for (const QString &name : backends.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        if (!tar.addDirectory(backends.filePath(name), QStringLiteral("backends/") + name)) {
            *error = tar.error();
            return {};
        }
    }
    // The problem where the far side's repository looks for it: sols/<target>/<problem name> (a grouped
    // name such as level1/88_MinGPTNewGelu keeps its group folder).
    const QString problemName = QStringLiteral("sols/%1/%2").arg(task.target.name, task.problem.name);
    // Files problem.yaml names outside its folder (`autocomp problems import` points `reference:` at
    // the user's own file) go along under _external/, and the copy of problem.yaml names them there.
    QList<std::pair<QString, QString>> external; // yaml key, absolute path
    for (const auto &[key, path] :
         {std::pair{"start", task.problem.startFile}, std::pair{"reference", task.problem.referenceFile},
          std::pair{"context", task.problem.contextFile}}) {
        if (!path.isEmpty()
            && QDir(problemDir.absoluteFilePath()).relativeFilePath(path).startsWith(QLatin1String("..")))
            external << std::pair{QLatin1String(key), path};
    }
    const QString yamlPath = problemDir.absoluteFilePath() + QStringLiteral("/problem.yaml");
    if (!tar.addDirectory(problemDir.absoluteFilePath(), problemName,
                          external.isEmpty() ? QStringList() : QStringList{QStringLiteral("problem.yaml")})) {
        *error = tar.error();
        return {};
    }
    if (!external.isEmpty()) {
        QFile file(yamlPath);
        if (!file.open(QIODevice::ReadOnly)) {
            *error = QStringLiteral("%1: cannot read: %2").arg(yamlPath, file.errorString());
            return {};
        }
        YAML::Node root;
        try {
            root = YAML::Load(file.readAll().toStdString());
        } catch (const YAML::Exception &e) {
            *error = QStringLiteral("%1: %2").arg(yamlPath, QString::fromStdString(e.what()));
            return {};
        }
        // A reference that needs its surroundings (backend.yaml `reference_tree`): the folder above it
        // goes along whole, and the files named inside it are named in that copy.
        QString tree;
        QString treeShipped;
        if (task.target.referenceTree > 0) {
            const auto isReference = [](const std::pair<QString, QString> &e) {
                return e.first == QLatin1String("reference");
            };
            if (const auto it = std::find_if(external.cbegin(), external.cend(), isReference); it != external.cend()) {
                tree = QFileInfo(it->second).absolutePath();
                for (int up = 1; up < task.target.referenceTree; ++up)
                    tree = QDir::cleanPath(tree + QStringLiteral("/.."));
                treeShipped = QStringLiteral("_external/tree/") + QFileInfo(tree).fileName();
                if (!addReferenceTree(tar, tree, problemName + QLatin1Char('/') + treeShipped, error)) {
                    *error =
                        QStringLiteral(
                            "%1 (the folder %2 above the reference that %3 names; the target's reference_tree is %4)")
                            .arg(*error, tree, yamlPath)
                            .arg(task.target.referenceTree);
                    return {};
                }
            }
        }
        for (const auto &[key, path] : std::as_const(external)) {
            if (!tree.isEmpty() && !QDir(tree).relativeFilePath(path).startsWith(QLatin1String(".."))) {
                root[key.toStdString()] =
                    QString(treeShipped + QLatin1Char('/') + QDir(tree).relativeFilePath(path)).toStdString();
                continue;
            }
            const QString shipped = QStringLiteral("_external/%1-%2").arg(key, QFileInfo(path).fileName());
            if (!tar.addFile(path, problemName + QLatin1Char('/') + shipped)) {
                *error = QStringLiteral("%1 (named by '%2' in %3)").arg(tar.error(), key, yamlPath);
                return {};
            }
            root[key.toStdString()] = shipped.toStdString();
        }
        YAML::Emitter out;
        out << root;
        if (!tar.addData(problemName + QStringLiteral("/problem.yaml"), QByteArray(out.c_str()) + '\n')) {
            *error = tar.error();
            return {};
        }
    }
    QByteArray archive = tar.finish();
    const QString h = QString::fromLatin1(QCryptographicHash::hash(archive, QCryptographicHash::Sha1).toHex().left(16));
    s_archives.insert(key, {h, archive});
    *hash = h;
    return archive;
}

EvalResult RemoteExecutor::resultFromJson(const QJsonObject &o, const QString &metric, QString *error)
{
    // The far side's `autocomp eval --json`: every status an evaluation ends with (its own no_hardware and
    // error included), checked as strictly as a local result.json. Its "cancelled" is no verdict: a failure.
    QString why;
    if (std::optional<EvalResult> r = EvalResult::fromJson(o, EvalResult::Source::Evaluation, metric, &why))
        return *r;
    *error = QStringLiteral("the remote evaluation's answer is not a verdict: ") + why;
    return EvalResult{};
}

} // namespace autocomp
