#include "catalog/kernelbench_import.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSaveFile>

namespace autocomp {

QString kernelBenchStartSuffix()
{
    return QStringLiteral(
        "\n\n# The starting point: the reference itself, as KernelBench's ModelNew. It is measured as the\n"
        "# baseline; candidates replace its operations with their own kernels (load_inline).\n"
        "class ModelNew(Model):\n"
        "    pass\n");
}

namespace {

bool looksLikeProblem(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    const QByteArray text = file.read(1 << 20);
    return text.contains("class Model") && text.contains("def get_inputs") && text.contains("def get_init_inputs");
}

// "level1" anywhere in the path gives the level; else 0.
int levelFromPath(const QString &path)
{
    static const QRegularExpression s_level(QStringLiteral("(?:^|/)level_?(\\d)(?:/|$)"),
                                            QRegularExpression::CaseInsensitiveOption);
    const auto m = s_level.match(QFileInfo(path).absolutePath());
    return m.hasMatch() ? m.captured(1).toInt() : 0;
}

// A folder name from a file name: letters, digits, '_', '-', '.'.
QString problemName(const QString &file)
{
    QString name = QFileInfo(file).completeBaseName();
    for (QChar &c : name)
        if (!c.isLetterOrNumber() && c != QLatin1Char('_') && c != QLatin1Char('-') && c != QLatin1Char('.'))
            c = QLatin1Char('_');
    return name;
}

QString yamlQuoted(QString text)
{
    text.replace(QLatin1Char('\\'), QStringLiteral("\\\\")).replace(QLatin1Char('"'), QStringLiteral("\\\""));
    return QLatin1Char('"') + text + QLatin1Char('"');
}

bool writeFile(const QString &path, const QByteArray &data, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size() || !file.commit()) {
        *error = QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

} // namespace

QStringList kernelBenchFiles(const QStringList &paths, QStringList *notFound)
{
    QStringList files;
    for (const QString &path : paths) {
        const QFileInfo info(path);
        if (info.isFile()) {
            files << info.absoluteFilePath();
        } else if (info.isDir()) {
            QStringList found;
            QDirIterator it(info.absoluteFilePath(), {QStringLiteral("*.py")}, QDir::Files,
                            QDirIterator::Subdirectories);
            const int depth = info.absoluteFilePath().count(QLatin1Char('/'));
            while (it.hasNext()) {
                const QString file = it.next();
                if (file.count(QLatin1Char('/')) - depth <= 3 && looksLikeProblem(file))
                    found << file;
            }
            found.sort();
            files << found;
        } else if (notFound) {
            *notFound << path;
        }
    }
    files.removeDuplicates();
    return files;
}

QList<KernelBenchImported> importKernelBench(const Repository &repository, const QStringList &files,
                                             const KernelBenchImportOptions &options,
                                             const std::function<void(const QString &)> &progress, QString *error)
{
    QString why;
    const auto target = repository.target(QStringLiteral("kernelbench"), &why);
    if (!target) {
        *error = why;
        return {};
    }
    if (const QString absent = target->absenceReason(); !absent.isEmpty()) {
        *error = absent;
        return {};
    }
    QString python = QStringLiteral("python3");
    QString device = QStringLiteral("cpu");
    for (const auto &setting : target->settings) {
        if (setting.first == QLatin1String("python"))
            python = setting.second;
        else if (setting.first == QLatin1String("device"))
            device = setting.second;
    }
    if (!options.device.isEmpty())
        device = options.device;
    QStringList arguments{target->dir + QStringLiteral("/tools/kb_import.py"), QStringLiteral("--device"), device};
    if (options.scale > 0)
        arguments << QStringLiteral("--scale") << QString::number(options.scale, 'g', 10);
    arguments << files;

    QProcess process;
    process.setProcessChannelMode(QProcess::SeparateChannels);
    QList<KernelBenchImported> out;
    const QString destination = options.destination.isEmpty() ? Repository::userDataDir() : options.destination;
    QByteArray pending;
    QString stderrText;
    auto handleLine = [&](const QByteArray &line) {
        QJsonParseError parseError;
        const QJsonObject o = QJsonDocument::fromJson(line, &parseError).object();
        if (parseError.error != QJsonParseError::NoError || o.isEmpty())
            return;
        KernelBenchImported item;
        item.file = o.value(QStringLiteral("file")).toString();
        if (!o.value(QStringLiteral("ok")).toBool()) {
            item.error = o.value(QStringLiteral("error")).toString();
            if (progress)
                progress(QStringLiteral("skipped %1").arg(item.error));
            out << item;
            return;
        }
        item.scale = o.value(QStringLiteral("scale")).toDouble(1.0);
        item.forwardMs = o.value(QStringLiteral("forward_ms")).toDouble();
        const int level = options.level >= 0 ? options.level : levelFromPath(item.file);
        item.id = QStringLiteral("level%1/%2").arg(level).arg(problemName(item.file));
        item.dir = destination + QStringLiteral("/sols/kernelbench/") + item.id;
        QFile reference(item.file);
        QString writeError;
        if (!reference.open(QIODevice::ReadOnly)) {
            item.error = QStringLiteral("%1: cannot read: %2").arg(item.file, reference.errorString());
        } else if (!QDir().mkpath(item.dir)) {
            item.error = QStringLiteral("%1: cannot create the folder").arg(item.dir);
        } else {
            QStringList sizes;
            const QJsonObject sizeMap = o.value(QStringLiteral("sizes")).toObject();
            for (auto it = sizeMap.begin(); it != sizeMap.end(); ++it)
                sizes << QStringLiteral("%1 %2 -> %3")
                             .arg(it.key())
                             .arg(it.value()[0].toInteger())
                             .arg(it.value()[1].toInteger());
            const QString yaml =
                QStringLiteral(
                    "# Imported by `autocomp problems import` on %1. The reference is the file below, as it is (not\n"
                    "# copied: an edit to it applies here; import it again to pick a new scale).\n"
                    "# Sizes at this scale: %2.\n"
                    "name: %3\n"
                    "description: %4\n"
                    "format: kernelbench\n"
                    "level: %5\n"
                    "reference: %6\n"
                    "start: start.py\n"
                    "scale: %7\n")
                    .arg(QDateTime::currentDateTimeUtc().toString(Qt::ISODate),
                         sizes.isEmpty() ? QStringLiteral("none scaled") : sizes.join(QLatin1String(", ")),
                         problemName(item.file),
                         yamlQuoted(QStringLiteral(
                                        "KernelBench level %1 problem %2 (one reference pass: %3 ms on %4 at scale %5)")
                                        .arg(level)
                                        .arg(problemName(item.file))
                                        .arg(item.forwardMs, 0, 'f', 1)
                                        .arg(device)
                                        .arg(item.scale, 0, 'g', 6)))
                    .arg(level)
                    .arg(yamlQuoted(item.file))
                    .arg(item.scale, 0, 'g', 10);
            if (!writeFile(item.dir + QStringLiteral("/start.py"),
                           reference.readAll() + kernelBenchStartSuffix().toUtf8(), &writeError)
                || !writeFile(item.dir + QStringLiteral("/problem.yaml"), yaml.toUtf8(), &writeError))
                item.error = writeError;
        }
        if (!item.error.isEmpty()) {
            item.id.clear();
            item.dir.clear();
        }
        if (progress)
            progress(item.error.isEmpty() ? QStringLiteral("%1: scale %2, one reference pass %3 ms")
                                                .arg(item.id)
                                                .arg(item.scale, 0, 'g', 6)
                                                .arg(item.forwardMs, 0, 'f', 1)
                                          : QStringLiteral("skipped %1").arg(item.error));
        out << item;
    };
    QObject::connect(&process, &QProcess::readyReadStandardOutput, [&] {
        pending += process.readAllStandardOutput();
        for (qsizetype nl; (nl = pending.indexOf('\n')) >= 0;) {
            handleLine(pending.left(nl));
            pending.remove(0, nl + 1);
        }
    });
    process.start(python, arguments);
    if (!process.waitForStarted(10000)) {
        *error = QStringLiteral("cannot run %1: %2").arg(python, process.errorString());
        return {};
    }
    // A file at GPU sizes is measured at several scales; allow a few minutes per file.
    while (process.state() != QProcess::NotRunning)
        process.waitForFinished(1000);
    pending += process.readAllStandardOutput();
    if (!pending.trimmed().isEmpty())
        handleLine(pending.trimmed());
    stderrText = QString::fromUtf8(process.readAllStandardError());
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        *error = QStringLiteral("the importer failed (exit status %1): %2")
                     .arg(process.exitCode())
                     .arg(stderrText.right(2000));
        return out;
    }
    return out;
}

} // namespace autocomp
