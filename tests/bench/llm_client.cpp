// llm_client: LlmClient throughput and per-request overhead against the fake LLM server run as a separate
// process ($AUTOCOMP_FAKE_LLM_SERVER), so this process's time is the client's own. 512 streamed requests,
// 64 in flight, the server answering each after a scripted 20 ms with a ~2 KB answer in 32 SSE events.
// overhead = the client's measured latency minus the scripted delay: request building, HTTP, SSE parsing,
// and any wait for a free connection (QNetworkAccessManager opens at most 6 per host over HTTP/1.1).
// With 6 in flight (no connection wait) the overhead is the client's own.
// One block per wire format; the first (OpenAI Responses) also prints the unprefixed summary keys.
#include "llm/llm_client.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <sys/resource.h>

using namespace autocomp;

namespace {

constexpr int Requests = 512;
constexpr int InFlight = 64;
constexpr int ServerDelayMs = 20;

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
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double percentile(QList<double> values, double p)
{
    if (values.isEmpty())
        return 0;
    std::sort(values.begin(), values.end());
    return values.at(std::min<qsizetype>(values.size() - 1, qsizetype(p * double(values.size()))));
}

struct Result {
    double requestsPerS = 0;
    double p50 = 0;
    double p99 = 0;
    double cpuMsPerRequest = 0;
    int failures = 0;
};

Result run(LlmClient &client, const QString &modelText, int inFlight)
{
    QString error;
    const auto spec = ModelSpec::parse(modelText, &error);
    if (!spec)
        qFatal("llm_client: %s", qPrintable(error));
    QList<double> overheads;
    int sent = 0;
    int done = 0;
    Result result;
    QEventLoop loop;
    std::function<void()> sendOne = [&] {
        LlmRequest request;
        request.spec = *spec;
        request.system = QStringLiteral("You are a kernel engineer.");
        request.prompt = QStringLiteral("Optimize kernel %1.").arg(sent);
        request.sampleIndex = sent++;
        LlmReply *reply = client.send(request);
        QObject::connect(reply, &LlmReply::finished, &loop, [&, reply] {
            reply->deleteLater();
            if (!reply->response().ok)
                ++result.failures;
            overheads << reply->response().latencyMs - ServerDelayMs;
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
    result.p50 = percentile(overheads, 0.5);
    result.p99 = percentile(overheads, 0.99);
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
        f.write("rules:\n  - cycle: true\n    responses:\n      - content: \"" + answer + "\"\n        delay_ms: "
                + QByteArray::number(ServerDelayMs) + "\n        usage: {prompt_tokens: 2000, completion_tokens: 500}\n");
    }
    QProcess server;
    server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    server.start(qEnvironmentVariable("AUTOCOMP_FAKE_LLM_SERVER"), {QStringLiteral("--script"), scriptPath});
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
    for (const auto &[name, model] : formats) {
        const Result r = run(client, model, InFlight);
        failures += r.failures;
        if (first) {
            std::printf("requests: %d, in flight: %d, server delay: %d ms, format: %s (streamed)\n", Requests, InFlight, ServerDelayMs, name);
            std::printf("requests_per_s: %.1f\n", r.requestsPerS);
            std::printf("overhead_p50_ms: %.2f ms\n", r.p50);
            std::printf("overhead_p99_ms: %.2f ms\n", r.p99);
            std::printf("client_cpu_per_request_ms: %.3f ms\n", r.cpuMsPerRequest);
            // The same with as many in flight as there are connections: no wait for one, the client's own cost.
            const Result unqueued = run(client, model, 6);
            std::printf("overhead_6_in_flight_p50_ms: %.2f ms, p99 %.2f ms\n", unqueued.p50, unqueued.p99);
            failures += unqueued.failures;
            first = false;
        }
        std::printf("%s: requests_per_s %.1f, overhead p50 %.2f ms, p99 %.2f ms, client cpu %.3f ms/request, failures %d\n", name,
                    r.requestsPerS, r.p50, r.p99, r.cpuMsPerRequest, r.failures);
    }
    std::printf("rss_start_mb: %.1f MB\n", rssStart);
    std::printf("rss_end_mb: %.1f MB\n", rssMb());
    server.kill();
    server.waitForFinished();
    return failures == 0 ? 0 : 1;
}
