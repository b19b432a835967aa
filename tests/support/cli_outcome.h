#pragma once
// What an `autocomp` process the tests started printed and how it ended, and running several such
// processes two at a time (the machines that run the tests have two cores).
#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QProcess>

#include <functional>
#include <memory>

namespace autocomp::test {

struct CliOutcome
{
    int exitCode = -1; // -1: crashed or killed
    QByteArray out;
    QByteArray err;
    QJsonObject json; // stdout parsed as a JSON object (`--json`), empty otherwise

    QString status() const;
    // The exit code, stdout's head and stderr's tail: for a failed check's message.
    QByteArray describe(qsizetype outBytes = 6000, qsizetype errBytes = 3000) const;
};

// Waits for a started process (killed past timeoutMs) and collects its output.
CliOutcome finishCli(QProcess &process, int timeoutMs = 900000);

// Starts count processes two at a time, in order, each with start(i), and returns their outcomes in order.
QList<CliOutcome> runTwoAtATime(qsizetype count, const std::function<std::unique_ptr<QProcess>(qsizetype)> &start,
                                int timeoutMs = 900000);

} // namespace autocomp::test
