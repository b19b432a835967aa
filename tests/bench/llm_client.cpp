// llm_client: LlmClient throughput and per-request overhead against the fake LLM server run as a separate
// process ($AUTOCOMP_FAKE_LLM_SERVER), so this process's time is the client's own. 512 streamed requests,
// 64 in flight, each answer ~2 KB in 32 SSE events.
// overhead = the time from send() to finished() less the server's own time for that request (from reading
// its first bytes to writing the last byte of the answer, scripted delay included), which the server
// writes to its --timing file on the same monotonic clock: request building, queueing in the client, HTTP
// over loopback, SSE parsing, usage and pricing, and waiting for a CPU the server is using.
// Runs:
//  - paced (the summary keys): answers after 100 to 505 ms, spread as real providers' latencies are, so
//    the answers of the 64 requests in flight do not all land in the same millisecond;
//  - saturated: every answer after 20 ms, as fast as client and server can go on two shared cores, for
//    the client's capacity (max_requests_per_s); its overhead is mostly waiting for a CPU;
//  - 6 in flight after 20 ms, and a burst: 64 in flight all answered after exactly 500 ms, so 64 answers
//    arrive at once and queue behind each other.
// One saturated block per wire format; the first (OpenAI Responses) also prints the summary keys.
#include "llm/llm_client.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <sys/resource.h>

using namespace autocomp;

namespace {

constexpr int Requests = 512;
constexpr int InFlight = 64;
constexpr int ServerDelayMs = 20;
constexpr int IdleDelayMs = 500;
constexpr int PacedResponses = 16; // delays 100, 127, ... 505 ms, in turn

qint64 monotonicNs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The server's --timing file: request tag -> when the server had read the request and when it wrote the
// answer's last byte (monotonic nanoseconds).
QHash<QByteArray, std::pair<qint64, qint64>> serverTimes(const QString &path)
{
    QHash<QByteArray, std::pair<qint64, qint64>> times;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return times;
    for (const QByteArray &line : f.readAll().split('\n')) {
        const QList<QByteArray> parts = line.split(' ');
        if (parts.size() == 3)
            times.insert(parts.at(0), {parts.at(1).toLongLong(), parts.at(2).toLongLong()});
    }
    return times;
}

double rssMb()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
    return 0;
}

double cpuSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double percentile(QList<double> values, double p)
{
    if (values.isEmpty())
        return 0;
    std::sort(values.begin(), values.end());
    return values.at(std::min<qsizetype>(values.size() - 1, qsizetype(p * double(values.size()))));
}

struct Result
{
    double requestsPerS = 0;
    double p50 = 0;
    double p99 = 0;
    double beforeP50 = 0; // send() until the server has read the request
    double afterP50 = 0; // the server's last byte until finished()
    double cpuMsPerRequest = 0;
    int failures = 0;
};

Result run(LlmClient &client, const QString &modelText, int inFlight, const QString &timingPath, const QString &tag)
{
    QString error;
    const auto spec = ModelSpec::parse(modelText, &error);
    if (!spec)
        qFatal("llm_client: %s", qPrintable(error));
    struct Timing
    {
        QByteArray tag;
        qint64 sentNs = 0;
        qint64 doneNs = 0;
    };
    QList<Timing> timings;
    int sent = 0;
    int done = 0;
    Result result;
    QEventLoop loop;
    std::function<void()> sendOne = [&] {
        LlmRequest request;
        request.spec = *spec;
        request.system = QStringLiteral("You are a kernel engineer.");
        request.prompt = QStringLiteral("%1: optimize kernel %2.").arg(tag).arg(sent);
        request.sampleIndex = sent++;
        Timing timing{request.hash().left(32).toLatin1(), monotonicNs(), 0};
        LlmReply *reply = client.send(request);
        QObject::connect(reply, &LlmReply::finished, &loop, [&, reply, timing]() mutable {
            timing.doneNs = monotonicNs();
            timings << timing;
            reply->deleteLater();
            if (!reply->response().ok)
                ++result.failures;
            if (sent < Requests)
                sendOne();
            if (++done == Requests)
                loop.quit();
        });
    };
    const double cpuStart = cpuSeconds();
    QElapsedTimer wall;
    wall.start();
    for (int i = 0; i < inFlight; ++i)
        sendOne();
    loop.exec();
    result.requestsPerS = Requests / (double(wall.nsecsElapsed()) / 1e9);
    result.cpuMsPerRequest = (cpuSeconds() - cpuStart) * 1000.0 / Requests;
    // The server writes its line as it hands over the last byte; give its event loop a moment to flush.
    QThread::msleep(50);
    const auto server = serverTimes(timingPath);
    QList<double> overheads, before, after;
    for (const Timing &t : std::as_const(timings)) {
        if (!server.contains(t.tag)) {
            ++result.failures;
            continue;
        }
        const auto [receivedNs, answeredNs] = server.value(t.tag);
        before << double(receivedNs - t.sentNs) / 1e6;
        after << double(t.doneNs - answeredNs) / 1e6;
        overheads << before.last() + after.last();
    }
    result.p50 = percentile(overheads, 0.5);
    result.p99 = percentile(overheads, 0.99);
    result.beforeP50 = percentile(before, 0.5);
    result.afterP50 = percentile(after, 0.5);
    return result;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QTemporaryDir dir;
    const QString scriptPath = dir.filePath(QStringLiteral("script.yaml"));
    {
        QFile f(scriptPath);
        if (!f.open(QIODevice::WriteOnly))
            return 1;
        const QByteArray answer = QByteArray("Chosen optimization: 3. Tile the loops. ").repeated(50);
        const QByteArray usage = "\n        usage: {prompt_tokens: 2000, completion_tokens: 500}\n";
        QByteArray script = "rules:\n  - match: '^idle'\n    cycle: true\n    responses:\n      - content: \"" + answer
            + "\"\n        delay_ms: " + QByteArray::number(IdleDelayMs) + usage
            + "  - match: '^paced'\n    cycle: true\n    responses:\n";
        for (int i = 0; i < PacedResponses; ++i)
            script += "      - content: \"" + answer
                + "\"\n        delay_ms: " + QByteArray::number(100 + 27 * ((i * 7) % PacedResponses)) + usage;
        script += "  - cycle: true\n    responses:\n      - content: \"" + answer
            + "\"\n        delay_ms: " + QByteArray::number(ServerDelayMs) + usage;
        f.write(script);
    }
    QProcess server;
    server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    const QString timingPath = dir.filePath(QStringLiteral("timing.txt"));
    server.start(qEnvironmentVariable("AUTOCOMP_FAKE_LLM_SERVER"),
                 {QStringLiteral("--script"), scriptPath, QStringLiteral("--timing"), timingPath});
    if (!server.waitForReadyRead(10000)) {
        std::fprintf(stderr, "llm_client: the fake LLM server did not start\n");
        return 1;
    }
    const QString base = QString::fromUtf8(server.readLine()).trimmed().section(QLatin1Char(' '), -1);

    const double rssStart = rssMb();
    LlmClient client;
    client.setMaxInFlight(InFlight);
    client.setMaxInFlightPerProvider(InFlight);
    client.setApiKeyLookup([](const QString &) { return QStringLiteral("bench-key"); });
    const QList<std::pair<const char *, QString>> formats{
        {"openai-responses", QStringLiteral("openai@%1/v1::gpt-4.1").arg(base)},
        {"openai-chat", QStringLiteral("openai@%1/v1::gpt-4.1#chat").arg(base)},
        {"anthropic-messages", QStringLiteral("anthropic@%1::claude-sonnet-4-5").arg(base)},
        {"gemini", QStringLiteral("gcp@%1/v1beta::gemini-2.5-pro").arg(base)},
        {"bedrock-converse", QStringLiteral("aws@%1::us.anthropic.claude-sonnet-4-5-20250929-v1:0").arg(base)},
    };
    int failures = 0;
    bool first = true;
    double rssAfterFirst = 0; // memory is flat when the runs after the first (3,584 more requests) add nothing
    for (const auto &[name, model] : formats) {
        const Result r = run(client, model, InFlight, timingPath, QString::fromLatin1(name));
        failures += r.failures;
        if (first) {
            rssAfterFirst = rssMb();
            const Result paced = run(client, model, InFlight, timingPath, QStringLiteral("paced"));
            std::printf("requests: %d, in flight: %d, answers after 100-505 ms, format: %s (streamed)\n", Requests,
                        InFlight, name);
            std::printf("requests_per_s: %.1f\n", paced.requestsPerS);
            std::printf("overhead_p50_ms: %.2f ms\n", paced.p50);
            std::printf("overhead_p99_ms: %.2f ms\n", paced.p99);
            std::printf("overhead_parts_p50_ms: to the server %.2f, from it %.2f\n", paced.beforeP50, paced.afterP50);
            std::printf("client_cpu_per_request_ms: %.3f ms\n", paced.cpuMsPerRequest);
            std::printf("max_requests_per_s: %.1f (saturated: answers after %d ms)\n", r.requestsPerS, ServerDelayMs);
            std::printf("saturated_overhead_p50_ms: %.2f ms, p99 %.2f ms (to the server %.2f, from it %.2f), client "
                        "cpu %.3f ms/request\n",
                        r.p50, r.p99, r.beforeP50, r.afterP50, r.cpuMsPerRequest);
            const Result six = run(client, model, 6, timingPath, QStringLiteral("six"));
            std::printf("overhead_6_in_flight_p50_ms: %.2f ms, p99 %.2f ms (to the server %.2f, from it %.2f)\n",
                        six.p50, six.p99, six.beforeP50, six.afterP50);
            const Result burst = run(client, model, InFlight, timingPath, QStringLiteral("idle"));
            std::printf("overhead_burst_64_at_once_p50_ms: %.2f ms, p99 %.2f ms (to the server %.2f, from it %.2f)\n",
                        burst.p50, burst.p99, burst.beforeP50, burst.afterP50);
            failures += paced.failures + six.failures + burst.failures;
            first = false;
        }
        std::printf("%s: requests_per_s %.1f, overhead p50 %.2f ms (to the server %.2f, from it %.2f), p99 %.2f ms, "
                    "client cpu %.3f ms/request, "
                    "failures %d\n",
                    name, r.requestsPerS, r.p50, r.beforeP50, r.afterP50, r.p99, r.cpuMsPerRequest, r.failures);
    }
    std::printf("rss_start_mb: %.1f MB\n", rssStart);
    std::printf("rss_end_mb: %.1f MB (after the first 512 requests: %.1f MB)\n", rssMb(), rssAfterFirst);
    server.kill();
    server.waitForFinished();
    return failures == 0 ? 0 : 1;
}
