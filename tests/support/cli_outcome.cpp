#include "cli_outcome.h"

#include <QJsonDocument>

namespace autocomp::test {

QString CliOutcome::status() const { return json.value(QStringLiteral("status")).toString(); }

QByteArray CliOutcome::describe(qsizetype outBytes, qsizetype errBytes) const
{
    return "exit " + QByteArray::number(exitCode) + "\nstdout:\n" + out.left(outBytes) + "\nstderr:\n"
        + err.right(errBytes);
}

CliOutcome finishCli(QProcess &process, int timeoutMs)
{
    CliOutcome o;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
    }
    o.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    o.out = process.readAllStandardOutput();
    o.err = process.readAllStandardError();
    o.json = QJsonDocument::fromJson(o.out).object();
    return o;
}

QList<CliOutcome> runTwoAtATime(qsizetype count, const std::function<std::unique_ptr<QProcess>(qsizetype)> &start,
                                int timeoutMs)
{
    QList<CliOutcome> outcomes;
    for (qsizetype i = 0; i < count; i += 2) {
        const std::unique_ptr<QProcess> a = start(i);
        const std::unique_ptr<QProcess> b = i + 1 < count ? start(i + 1) : nullptr;
        outcomes << finishCli(*a, timeoutMs);
        if (b)
            outcomes << finishCli(*b, timeoutMs);
    }
    return outcomes;
}

} // namespace autocomp::test
