#include "model/run_config.h"

#include <algorithm>

#include "platform/network_proxy.h"
#include "platform/yaml_reader.h"

#include <QFile>
#include <QRegularExpression>

#include <functional>

namespace autocomp {

double SearchConfig::slackFor(int iteration) const
{
    if (parentSlack.isEmpty())
        return 1.0;
    const int index = qBound(0, iteration - 1, int(parentSlack.size()) - 1);
    return parentSlack.at(index);
}

std::optional<RunConfig> RunConfig::fromFile(const QString &path, QStringList *errors)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (errors)
            *errors << QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    return fromYaml(file.readAll(), path, errors);
}

namespace {

// "user@host:port" (user and port optional).
std::optional<RemoteHost> parseHostString(const QString &text)
{
    static const QRegularExpression s_host(
        QStringLiteral("^(?:([A-Za-z0-9._-]+)@)?([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:]+\\])(?::([0-9]{1,5}))?$"));
    const auto m = s_host.match(text);
    if (!m.hasMatch())
        return std::nullopt;
    RemoteHost h;
    h.user = m.captured(1);
    h.host = m.captured(2);
    if (!m.captured(3).isEmpty())
        h.port = m.captured(3).toInt();
    return h;
}

void parseRemote(YamlReader &r, const YAML::Node &e, EvaluationConfig &c)
{
    if (const auto hosts = e["hosts"]) {
        if (!hosts.IsSequence()) {
            r.error(
                hosts,
                QStringLiteral(
                    "'evaluation.hosts' must be a list of hosts (\"user@host:port\" or {host, user, port, slots})"));
        } else {
            for (const YAML::Node &h : hosts) {
                std::optional<RemoteHost> host;
                if (h.IsScalar()) {
                    host = parseHostString(fromStd(h.Scalar()));
                    if (!host)
                        r.error(
                            h,
                            QStringLiteral("'evaluation.hosts': '%1' is not user@host:port").arg(fromStd(h.Scalar())));
                } else if (h.IsMap()) {
                    r.checkKeys(h, QStringLiteral("evaluation.hosts[]"),
                                {QStringLiteral("host"), QStringLiteral("user"), QStringLiteral("port"),
                                 QStringLiteral("slots")});
                    host = RemoteHost{};
                    if (const auto n = h["host"]) {
                        const auto parsed = parseHostString(
                            r.string(n, QStringLiteral("evaluation.hosts[].host")).value_or(QString()));
                        if (!parsed || !parsed->user.isEmpty() || parsed->port != 22)
                            r.error(n, QStringLiteral("'evaluation.hosts[].host' must be a host name or address"));
                        else
                            host->host = parsed->host;
                    } else {
                        r.error(h, QStringLiteral("missing required key 'host' in 'evaluation.hosts'"));
                    }
                    if (const auto n = h["user"])
                        host->user = r.string(n, QStringLiteral("evaluation.hosts[].user")).value_or(QString());
                    if (const auto n = h["port"])
                        if (const auto v = r.integer(n, QStringLiteral("evaluation.hosts[].port"))) {
                            host->port = int(*v);
                            if (*v < 1 || *v > 65535)
                                r.error(n, QStringLiteral("'evaluation.hosts[].port' must be between 1 and 65535"));
                        }
                    if (const auto n = h["slots"])
                        if (const auto v = r.integer(n, QStringLiteral("evaluation.hosts[].slots"))) {
                            host->slots = int(*v);
                            if (*v < 1 || *v > 256)
                                r.error(n, QStringLiteral("'evaluation.hosts[].slots' must be between 1 and 256"));
                        }
                } else {
                    r.error(h,
                            QStringLiteral(
                                "'evaluation.hosts' entries are \"user@host:port\" or {host, user, port, slots}"));
                }
                if (host)
                    c.hosts << *host;
            }
        }
    }
    if (const auto ssh = e["ssh"]) {
        r.checkKeys(ssh, QStringLiteral("evaluation.ssh"),
                    {QStringLiteral("known_hosts"), QStringLiteral("identity"), QStringLiteral("connect_timeout_s")});
        if (ssh.IsMap()) {
            if (const auto n = ssh["known_hosts"])
                c.sshKnownHosts = r.string(n, QStringLiteral("evaluation.ssh.known_hosts")).value_or(QString());
            if (const auto n = ssh["identity"])
                c.sshIdentity = r.string(n, QStringLiteral("evaluation.ssh.identity")).value_or(QString());
            if (const auto n = ssh["connect_timeout_s"])
                c.sshConnectTimeoutS = int(
                    r.integer(n, QStringLiteral("evaluation.ssh.connect_timeout_s")).value_or(c.sshConnectTimeoutS));
        }
    }
    if (const auto remote = e["remote"]) {
        r.checkKeys(remote, QStringLiteral("evaluation.remote"),
                    {QStringLiteral("command"), QStringLiteral("workdir"), QStringLiteral("retries")});
        if (remote.IsMap()) {
            if (const auto n = remote["command"])
                c.remoteCommand = r.string(n, QStringLiteral("evaluation.remote.command")).value_or(c.remoteCommand);
            if (const auto n = remote["workdir"])
                c.remoteWorkdir = r.string(n, QStringLiteral("evaluation.remote.workdir")).value_or(c.remoteWorkdir);
            if (const auto n = remote["retries"])
                c.remoteRetries = int(
                    r.integer(n, QStringLiteral("evaluation.remote.retries")).value_or(c.remoteRetries));
        }
    }
    if (const auto slurm = e["slurm"]) {
        r.checkKeys(slurm, QStringLiteral("evaluation.slurm"),
                    {QStringLiteral("partition"), QStringLiteral("gres"), QStringLiteral("time"), QStringLiteral("mem"),
                     QStringLiteral("slots"), QStringLiteral("shared_dir"), QStringLiteral("poll_ms"),
                     QStringLiteral("batch"), QStringLiteral("batch_wait_ms"), QStringLiteral("cpus")});
        if (slurm.IsMap()) {
            static const QRegularExpression s_word(QStringLiteral("^[A-Za-z0-9_.:,=+-]*$"));
            const auto word = [&](const char *key, QString &out) {
                if (const auto n = slurm[key]) {
                    out = r.string(n, QStringLiteral("evaluation.slurm.") + QLatin1String(key)).value_or(QString());
                    if (!s_word.match(out).hasMatch())
                        r.error(n,
                                QStringLiteral(
                                    "'evaluation.slurm.%1' may hold only letters, digits and _ . : , = + -, got '%2'")
                                    .arg(QLatin1String(key), out));
                }
            };
            word("partition", c.slurmPartition);
            word("gres", c.slurmGres);
            word("time", c.slurmTime);
            word("mem", c.slurmMem);
            if (const auto n = slurm["slots"])
                c.slurmSlots = int(r.integer(n, QStringLiteral("evaluation.slurm.slots")).value_or(c.slurmSlots));
            if (const auto n = slurm["shared_dir"])
                c.slurmSharedDir = r.string(n, QStringLiteral("evaluation.slurm.shared_dir")).value_or(QString());
            if (const auto n = slurm["poll_ms"])
                c.slurmPollMs = int(r.integer(n, QStringLiteral("evaluation.slurm.poll_ms")).value_or(c.slurmPollMs));
            if (const auto n = slurm["batch"])
                c.slurmBatch = int(r.integer(n, QStringLiteral("evaluation.slurm.batch")).value_or(c.slurmBatch));
            if (const auto n = slurm["batch_wait_ms"])
                c.slurmBatchWaitMs = int(
                    r.integer(n, QStringLiteral("evaluation.slurm.batch_wait_ms")).value_or(c.slurmBatchWaitMs));
            if (const auto n = slurm["cpus"])
                c.slurmCpus = int(r.integer(n, QStringLiteral("evaluation.slurm.cpus")).value_or(c.slurmCpus));
        }
    }
    if (const auto placement = e["placement"]) {
        if (!placement.IsMap()) {
            r.error(placement,
                    QStringLiteral("'evaluation.placement' must map target names to remote, compile_local or local"));
        } else {
            for (auto it = placement.begin(); it != placement.end(); ++it) {
                const QString target = fromStd(it->first.Scalar());
                const QString where =
                    r.string(it->second, QStringLiteral("evaluation.placement.") + target).value_or(QString());
                if (!QStringList{QStringLiteral("remote"), QStringLiteral("compile_local"), QStringLiteral("local")}
                         .contains(where))
                    r.error(it->second,
                            QStringLiteral("'evaluation.placement.%1' must be remote, compile_local or local, got '%2'")
                                .arg(target, where));
                c.placement.insert(target, where);
            }
        }
    }
}

// The sections of a run configuration, each read into `config` with its errors reported on `r`.
void readModels(YamlReader &r, const YAML::Node &root, RunConfig &config)
{
    if (const auto models = root["models"]) {
        r.checkKeys(models, QStringLiteral("models"), {QStringLiteral("plan"), QStringLiteral("code")});
        if (models.IsMap()) {
            if (const auto n = models["plan"])
                config.planModels = r.stringList(n, QStringLiteral("models.plan")).value_or(QStringList());
            if (const auto n = models["code"])
                config.codeModels = r.stringList(n, QStringLiteral("models.code")).value_or(QStringList());
        }
    } else {
        r.error(root, QStringLiteral("missing required key 'models' (e.g. models: {plan: [\"openai::gpt-5.2\"]})"));
    }
}

void readSearch(YamlReader &r, const YAML::Node &s, RunConfig &config)
{
    const QStringList known{QStringLiteral("iterations"),
                            QStringLiteral("beam_width"),
                            QStringLiteral("plans_per_parent"),
                            QStringLiteral("code_per_plan"),
                            QStringLiteral("menu_dropout"),
                            QStringLiteral("new_idea_probability"),
                            QStringLiteral("fix_attempts"),
                            QStringLiteral("parent_slack"),
                            QStringLiteral("seed"),
                            QStringLiteral("translate_iters"),
                            QStringLiteral("translate_threshold"),
                            QStringLiteral("edit_mode"),
                            QStringLiteral("feedback"),
                            QStringLiteral("isa_filter"),
                            QStringLiteral("early_stop"),
                            QStringLiteral("early_stop_patience"),
                            QStringLiteral("schedule"),
                            QStringLiteral("noise_floor"),
                            QStringLiteral("translate_score"),
                            QStringLiteral("translate_perf_threshold"),
                            QStringLiteral("skip_planning"),
                            QStringLiteral("menu_strategy"),
                            QStringLiteral("example_rate")};
    r.checkKeys(s, QStringLiteral("search"), known);
    SearchConfig &c = config.search;
    auto readInt = [&](const char *key, int &out) {
        if (const auto n = s[key])
            if (auto v = r.integer(n, QStringLiteral("search.") + QLatin1String(key)))
                out = int(*v);
    };
    auto readDouble = [&](const char *key, double &out) {
        if (const auto n = s[key])
            if (auto v = r.number(n, QStringLiteral("search.") + QLatin1String(key)))
                out = *v;
    };
    if (s.IsMap()) {
        readInt("iterations", c.iterations);
        readInt("beam_width", c.beamWidth);
        readInt("plans_per_parent", c.plansPerParent);
        readInt("code_per_plan", c.codePerPlan);
        readDouble("menu_dropout", c.menuDropout);
        readDouble("new_idea_probability", c.newIdeaProbability);
        readDouble("translate_threshold", c.translateThreshold);
        readInt("fix_attempts", c.fixAttempts);
        readInt("translate_iters", c.translateIters);
        readInt("early_stop_patience", c.earlyStopPatience);
        if (const auto n = s["seed"])
            if (auto v = r.integer(n, QStringLiteral("search.seed")))
                c.seed = quint64(*v);
        if (const auto n = s["edit_mode"])
            c.editMode = r.boolean(n, QStringLiteral("search.edit_mode")).value_or(false);
        if (const auto n = s["feedback"])
            c.feedback = r.boolean(n, QStringLiteral("search.feedback")).value_or(true);
        if (const auto n = s["isa_filter"])
            c.isaFilter = r.boolean(n, QStringLiteral("search.isa_filter")).value_or(false);
        if (const auto n = s["translate_score"])
            c.translateScore = r.boolean(n, QStringLiteral("search.translate_score")).value_or(true);
        readDouble("translate_perf_threshold", c.translatePerfThreshold);
        if (const auto n = s["skip_planning"])
            c.skipPlanning = r.boolean(n, QStringLiteral("search.skip_planning")).value_or(false);
        if (const auto n = s["menu_strategy"]; n && !n.IsNull()) {
            // Autocomp writes None for the agent's menu only.
            const QString v = r.string(n, QStringLiteral("search.menu_strategy")).value_or(QString());
            if (v == QLatin1String("one-shot"))
                c.menuStrategy = v;
            else if (!v.isEmpty() && v != QLatin1String("none") && v != QLatin1String("None"))
                r.error(n, QStringLiteral("'search.menu_strategy' must be one-shot or none, got '%1'").arg(v));
        }
        if (const auto n = s["example_rate"]; n && !n.IsNull())
            c.exampleRate = r.number(n, QStringLiteral("search.example_rate"));
        if (const auto n = s["early_stop"]; n && !n.IsNull())
            c.earlyStop = r.number(n, QStringLiteral("search.early_stop"));
        if (const auto n = s["noise_floor"]; n && !n.IsNull())
            c.noiseFloor = r.number(n, QStringLiteral("search.noise_floor"));
        if (const auto n = s["schedule"]; n && !n.IsNull())
            c.schedule = r.string(n, QStringLiteral("search.schedule")).value_or(QString());
        if (const auto n = s["parent_slack"]) {
            if (n.IsSequence()) {
                c.parentSlack.clear();
                for (const auto &item : n)
                    if (auto v = r.number(item, QStringLiteral("search.parent_slack")))
                        c.parentSlack << *v;
            } else if (auto v = r.number(n, QStringLiteral("search.parent_slack"))) {
                c.parentSlack = {*v};
            }
        }
    }
}

void readBudget(YamlReader &r, const YAML::Node &b, RunConfig &config)
{
    r.checkKeys(b, QStringLiteral("budget"),
                {QStringLiteral("max_usd"), QStringLiteral("max_llm_calls"), QStringLiteral("max_hours")});
    if (b.IsMap()) {
        if (const auto n = b["max_usd"]; n && !n.IsNull())
            config.budget.maxUsd = r.number(n, QStringLiteral("budget.max_usd"));
        if (const auto n = b["max_llm_calls"]; n && !n.IsNull())
            config.budget.maxLlmCalls = r.integer(n, QStringLiteral("budget.max_llm_calls"));
        if (const auto n = b["max_hours"]; n && !n.IsNull())
            config.budget.maxHours = r.number(n, QStringLiteral("budget.max_hours"));
    }
}

void readLlm(YamlReader &r, const YAML::Node &l, RunConfig &config)
{
    r.checkKeys(l, QStringLiteral("llm"),
                {QStringLiteral("max_answer_bytes"), QStringLiteral("max_prompt_bytes"),
                 QStringLiteral("reuse_answers"), QStringLiteral("resend_billed"), QStringLiteral("proxy"),
                 QStringLiteral("max_tokens")});
    if (l.IsMap()) {
        if (const auto n = l["max_answer_bytes"])
            if (auto v = r.integer(n, QStringLiteral("llm.max_answer_bytes")))
                config.llm.maxAnswerBytes = *v;
        if (const auto n = l["max_prompt_bytes"])
            if (auto v = r.integer(n, QStringLiteral("llm.max_prompt_bytes")))
                config.llm.maxPromptBytes = *v;
        if (const auto n = l["max_tokens"])
            if (auto v = r.integer(n, QStringLiteral("llm.max_tokens")))
                config.llm.maxTokens = int(std::clamp<qint64>(*v, 0, 1 << 30));
        if (const auto n = l["resend_billed"])
            config.llm.resendBilled = r.boolean(n, QStringLiteral("llm.resend_billed")).value_or(false);
        if (const auto n = l["proxy"]) {
            config.llm.proxy = r.string(n, QStringLiteral("llm.proxy")).value_or(QString());
            QString proxyError;
            if (!parseProxySetting(config.llm.proxy, &proxyError))
                r.error(n, QStringLiteral("llm.proxy: ") + proxyError);
        }
        if (const auto n = l["reuse_answers"]) {
            const QString mode = r.string(n, QStringLiteral("llm.reuse_answers")).value_or(QString());
            if (mode == QLatin1String("across_runs"))
                config.llm.reuseAcrossRuns = true;
            else if (mode != QLatin1String("per_run"))
                r.error(n, QStringLiteral("'llm.reuse_answers' must be per_run or across_runs, got '%1'").arg(mode));
        }
    }
}

void readEvaluation(YamlReader &r, const YAML::Node &e, RunConfig &config)
{
    r.checkKeys(e, QStringLiteral("evaluation"),
                {QStringLiteral("executor"), QStringLiteral("parallel_compiles"), QStringLiteral("bench_slots"),
                 QStringLiteral("sandbox"), QStringLiteral("keep_workdirs"), QStringLiteral("bench_isolation"),
                 QStringLiteral("profile"), QStringLiteral("hosts"), QStringLiteral("ssh"), QStringLiteral("remote"),
                 QStringLiteral("slurm"), QStringLiteral("placement"), QStringLiteral("compile_only")});
    if (e.IsMap()) {
        EvaluationConfig &c = config.evaluation;
        if (const auto n = e["executor"])
            c.executor = r.string(n, QStringLiteral("evaluation.executor")).value_or(c.executor);
        if (const auto n = e["parallel_compiles"]) {
            if (n.IsScalar() && n.Scalar() == "auto")
                c.parallelCompiles = 0;
            else if (auto v = r.integer(n, QStringLiteral("evaluation.parallel_compiles")))
                c.parallelCompiles = int(*v);
        }
        if (const auto n = e["bench_slots"])
            if (auto v = r.integer(n, QStringLiteral("evaluation.bench_slots")))
                c.benchSlots = int(*v);
        if (const auto n = e["sandbox"]) {
            c.sandbox = r.string(n, QStringLiteral("evaluation.sandbox")).value_or(c.sandbox);
            if (!QStringList{QStringLiteral("auto"), QStringLiteral("off"), QStringLiteral("required")}.contains(
                    c.sandbox))
                r.error(n,
                        QStringLiteral("'evaluation.sandbox' must be auto, off or required, got '%1'").arg(c.sandbox));
        }
        if (const auto n = e["bench_isolation"]) {
            c.benchIsolation = r.string(n, QStringLiteral("evaluation.bench_isolation")).value_or(c.benchIsolation);
            if (!QStringList{QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("exclusive")}.contains(
                    c.benchIsolation))
                r.error(n,
                        QStringLiteral("'evaluation.bench_isolation' must be auto, cpu or exclusive, got '%1'")
                            .arg(c.benchIsolation));
        }
        if (const auto n = e["keep_workdirs"])
            c.keepWorkdirs = r.boolean(n, QStringLiteral("evaluation.keep_workdirs")).value_or(false);
        if (const auto n = e["profile"])
            c.profile = r.boolean(n, QStringLiteral("evaluation.profile")).value_or(false);
        if (const auto n = e["compile_only"])
            c.compileOnly = r.boolean(n, QStringLiteral("evaluation.compile_only")).value_or(false);
        if (const auto n = e["executor"]; n
            && !QStringList{QStringLiteral("local"), QStringLiteral("ssh"), QStringLiteral("slurm")}.contains(
                c.executor))
            r.error(n, QStringLiteral("'evaluation.executor' must be local, ssh or slurm, got '%1'").arg(c.executor));
        parseRemote(r, e, c);
    }
}

// Range checks name the line of the offending key: the message starts with 'section.key'.
void reportInvalidValues(YamlReader &r, const YAML::Node &root, const RunConfig &config)
{
    static const QRegularExpression s_key(QStringLiteral("^'([a-z_.]+)'"));
    const std::function<YAML::Node(const YAML::Node &, QStringList)> find = [&find](const YAML::Node &n,
                                                                                    QStringList parts) -> YAML::Node {
        if (parts.isEmpty())
            return n;
        if (!n.IsMap())
            return YAML::Node(YAML::NodeType::Undefined);
        const YAML::Node child = n[parts.first().toStdString()];
        if (!child)
            return YAML::Node(YAML::NodeType::Undefined);
        return find(child, parts.mid(1));
    };
    for (const QString &problem : config.validate()) {
        const QString key = s_key.match(problem).captured(1);
        const YAML::Node node = key.isEmpty() ? YAML::Node(YAML::NodeType::Undefined)
                                              : find(root, key.split(QLatin1Char('.')));
        if (node.IsDefined())
            r.error(node, problem);
        else
            r.error(problem);
    }
}

} // namespace

QString RemoteHost::label() const
{
    return (user.isEmpty() ? QString() : user + QLatin1Char('@')) + host
        + (port == 22 ? QString() : QLatin1Char(':') + QString::number(port));
}

QString EvaluationConfig::placementFor(const QString &target) const
{
    if (executor == QLatin1String("local"))
        return QStringLiteral("local");
    return placement.value(target, QStringLiteral("remote"));
}

std::optional<RunConfig> RunConfig::fromYaml(const QByteArray &yaml, const QString &fileName, QStringList *errors)
{
    YamlReader r(fileName);
    RunConfig config;
    const auto parsed = r.parse(yaml);
    if (parsed) {
        const YAML::Node &root = *parsed;
        if (!root.IsMap()) {
            r.error(root, QStringLiteral("a run configuration must be a mapping with at least 'target' and 'problem'"));
        } else {
            r.checkKeys(root, {},
                        {QStringLiteral("target"), QStringLiteral("problem"), QStringLiteral("agent"),
                         QStringLiteral("models"), QStringLiteral("search"), QStringLiteral("budget"),
                         QStringLiteral("evaluation"), QStringLiteral("llm")});
            if (const auto n = root["target"])
                config.target = r.string(n, QStringLiteral("target")).value_or(config.target);
            else
                r.error(root, QStringLiteral("missing required key 'target' (e.g. target: cpu)"));
            if (const auto n = root["problem"])
                config.problem = r.string(n, QStringLiteral("problem")).value_or(QString());
            else
                r.error(root, QStringLiteral("missing required key 'problem'"));
            if (const auto n = root["agent"]; n && !n.IsNull())
                config.agent = r.string(n, QStringLiteral("agent")).value_or(QString());

            readModels(r, root, config);
            if (const auto s = root["search"])
                readSearch(r, s, config);
            if (const auto b = root["budget"])
                readBudget(r, b, config);
            if (const auto l = root["llm"])
                readLlm(r, l, config);
            if (const auto e = root["evaluation"])
                readEvaluation(r, e, config);
        }
    }
    if (r.ok() && parsed)
        reportInvalidValues(r, *parsed, config);
    if (!r.ok()) {
        if (errors)
            *errors << r.errors();
        return std::nullopt;
    }
    return config;
}

QStringList RunConfig::validate() const
{
    QStringList out;
    if (target.isEmpty())
        out << QStringLiteral("'target' must not be empty");
    if (problem.isEmpty())
        out << QStringLiteral("'problem' must not be empty");
    if (planModels.isEmpty())
        out << QStringLiteral("'models.plan' must name at least one model");
    if (search.iterations < 1)
        out << QStringLiteral("'search.iterations' must be at least 1");
    if (search.beamWidth < 1)
        out << QStringLiteral("'search.beam_width' must be at least 1");
    if (search.plansPerParent < 1)
        out << QStringLiteral("'search.plans_per_parent' must be at least 1");
    if (search.codePerPlan < 1)
        out << QStringLiteral("'search.code_per_plan' must be at least 1");
    if (search.menuDropout < 0 || search.menuDropout > 1)
        out << QStringLiteral("'search.menu_dropout' must be between 0 and 1");
    if (search.newIdeaProbability < 0 || search.newIdeaProbability > 1)
        out << QStringLiteral("'search.new_idea_probability' must be between 0 and 1");
    if (search.translateIters < 0)
        out << QStringLiteral("'search.translate_iters' must not be negative");
    if (search.translatePerfThreshold < 1)
        out << QStringLiteral(
            "'search.translate_perf_threshold' is a slowdown factor and must be at least 1 (e.g. 15)");
    if (search.exampleRate && (*search.exampleRate < 0 || *search.exampleRate > 1))
        out << QStringLiteral("'search.example_rate' must be between 0 and 1");
    if (!search.menuStrategy.isEmpty() && search.menuStrategy != QLatin1String("one-shot"))
        out << QStringLiteral("'search.menu_strategy' must be one-shot or none, got '%1'").arg(search.menuStrategy);
    if (search.earlyStop && *search.earlyStop < 1.0)
        out << QStringLiteral("'search.early_stop' is an improvement ratio and must be at least 1.0 (e.g. 1.02)");
    if (search.noiseFloor && (*search.noiseFloor < 0 || *search.noiseFloor >= 0.5))
        out << QStringLiteral("'search.noise_floor' is a fraction between 0 and 0.5 (e.g. 0.04 for 4 %)");
    if (search.earlyStopPatience < 1)
        out << QStringLiteral("'search.early_stop_patience' must be at least 1");
    if (search.fixAttempts < 0)
        out << QStringLiteral("'search.fix_attempts' must not be negative");
    for (double slack : search.parentSlack)
        if (slack <= 0)
            out << QStringLiteral("'search.parent_slack' values must be positive");
    if (evaluation.benchSlots < 1)
        out << QStringLiteral("'evaluation.bench_slots' must be at least 1");
    if (evaluation.parallelCompiles < 0)
        out << QStringLiteral("'evaluation.parallel_compiles' must be 'auto' or at least 1");
    if (!QStringList{QStringLiteral("local"), QStringLiteral("ssh"), QStringLiteral("slurm")}.contains(
            evaluation.executor))
        out << QStringLiteral("'evaluation.executor' must be local, ssh or slurm, got '%1'").arg(evaluation.executor);
    for (qsizetype i = 0; i < evaluation.hosts.size(); ++i) {
        const RemoteHost &h = evaluation.hosts.at(i);
        if (h.host.isEmpty() || h.host.contains(QLatin1Char('@')) || h.host.contains(QLatin1Char(' ')))
            out << QStringLiteral("'evaluation.hosts[%1].host' must be a host name or address, got '%2'")
                       .arg(i + 1)
                       .arg(h.host);
        if (h.port < 1 || h.port > 65535)
            out << QStringLiteral("'evaluation.hosts[%1].port' must be between 1 and 65535").arg(i + 1);
        if (h.slots < 1 || h.slots > 256)
            out << QStringLiteral("'evaluation.hosts[%1].slots' must be between 1 and 256").arg(i + 1);
    }
    // sbatch's arguments: words only (they go on its command line).
    static const QRegularExpression s_word(QStringLiteral("^[A-Za-z0-9_.:,=+-]*$"));
    for (const auto &[key, value] :
         {std::pair{"partition", evaluation.slurmPartition}, std::pair{"gres", evaluation.slurmGres},
          std::pair{"time", evaluation.slurmTime}, std::pair{"mem", evaluation.slurmMem}})
        if (!s_word.match(value).hasMatch())
            out << QStringLiteral("'evaluation.slurm.%1' may hold only letters, digits and _ . : , = + -, got '%2'")
                       .arg(QLatin1String(key), value);
    for (auto it = evaluation.placement.cbegin(); it != evaluation.placement.cend(); ++it)
        if (!QStringList{QStringLiteral("remote"), QStringLiteral("compile_local"), QStringLiteral("local")}.contains(
                it.value()))
            out << QStringLiteral("'evaluation.placement.%1' must be remote, compile_local or local, got '%2'")
                       .arg(it.key(), it.value());
    if (evaluation.executor == QLatin1String("ssh") && evaluation.hosts.isEmpty())
        out << QStringLiteral("'evaluation.executor' is ssh but 'evaluation.hosts' names no host");
    if (evaluation.executor != QLatin1String("ssh") && !evaluation.hosts.isEmpty())
        out << QStringLiteral("'evaluation.hosts' is used only with executor: ssh");
    if (!evaluation.remoteWorkdir.startsWith(QLatin1Char('/')))
        out << QStringLiteral("'evaluation.remote.workdir' must be an absolute path");
    if (evaluation.remoteCommand.isEmpty())
        out << QStringLiteral("'evaluation.remote.command' must not be empty");
    if (evaluation.remoteRetries < 0 || evaluation.remoteRetries > 10)
        out << QStringLiteral("'evaluation.remote.retries' must be between 0 and 10");
    if (evaluation.sshConnectTimeoutS < 1)
        out << QStringLiteral("'evaluation.ssh.connect_timeout_s' must be at least 1");
    if (evaluation.slurmSlots < 1)
        out << QStringLiteral("'evaluation.slurm.slots' must be at least 1");
    if (evaluation.slurmPollMs < 50)
        out << QStringLiteral("'evaluation.slurm.poll_ms' must be at least 50");
    if (evaluation.slurmBatch < 1 || evaluation.slurmBatch > 64)
        out << QStringLiteral("'evaluation.slurm.batch' must be between 1 and 64");
    if (evaluation.slurmBatchWaitMs < 0 || evaluation.slurmBatchWaitMs > 600000)
        out << QStringLiteral("'evaluation.slurm.batch_wait_ms' must be between 0 and 600000");
    if (evaluation.slurmCpus < 1 || evaluation.slurmCpus > 1024)
        out << QStringLiteral("'evaluation.slurm.cpus' must be between 1 and 1024");
    if (!evaluation.slurmSharedDir.isEmpty() && !evaluation.slurmSharedDir.startsWith(QLatin1Char('/')))
        out << QStringLiteral("'evaluation.slurm.shared_dir' must be an absolute path");
    if (budget.maxUsd && *budget.maxUsd < 0)
        out << QStringLiteral("'budget.max_usd' must not be negative");
    if (budget.maxLlmCalls && *budget.maxLlmCalls < 0)
        out << QStringLiteral("'budget.max_llm_calls' must not be negative");
    if (budget.maxHours && *budget.maxHours < 0)
        out << QStringLiteral("'budget.max_hours' must not be negative");
    if (llm.maxAnswerBytes < 1024)
        out << QStringLiteral("'llm.max_answer_bytes' must be at least 1024");
    if (llm.maxPromptBytes < 1024)
        out << QStringLiteral("'llm.max_prompt_bytes' must be at least 1024");
    if (llm.maxTokens < 256)
        out << QStringLiteral("'llm.max_tokens' must be at least 256");
    return out;
}

QByteArray RunConfig::toYaml() const
{
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "target" << YAML::Value << toStd(target);
    out << YAML::Key << "problem" << YAML::Value << toStd(problem);
    if (!agent.isEmpty())
        out << YAML::Key << "agent" << YAML::Value << toStd(agent);
    auto list = [&](const QStringList &items) {
        out << YAML::Flow << YAML::BeginSeq;
        for (const QString &item : items)
            out << toStd(item);
        out << YAML::EndSeq;
    };
    out << YAML::Key << "models" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "plan" << YAML::Value;
    list(planModels);
    out << YAML::Key << "code" << YAML::Value;
    if (codeModels.isEmpty())
        out << YAML::Null;
    else
        list(codeModels);
    out << YAML::EndMap;

    out << YAML::Key << "search" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "iterations" << YAML::Value << search.iterations;
    out << YAML::Key << "beam_width" << YAML::Value << search.beamWidth;
    out << YAML::Key << "plans_per_parent" << YAML::Value << search.plansPerParent;
    out << YAML::Key << "code_per_plan" << YAML::Value << search.codePerPlan;
    out << YAML::Key << "menu_dropout" << YAML::Value << search.menuDropout;
    out << YAML::Key << "new_idea_probability" << YAML::Value << search.newIdeaProbability;
    out << YAML::Key << "fix_attempts" << YAML::Value << search.fixAttempts;
    out << YAML::Key << "parent_slack" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (double s : search.parentSlack)
        out << s;
    out << YAML::EndSeq;
    out << YAML::Key << "seed" << YAML::Value << static_cast<unsigned long long>(search.seed);
    out << YAML::Key << "translate_iters" << YAML::Value << search.translateIters;
    out << YAML::Key << "translate_threshold" << YAML::Value << search.translateThreshold;
    out << YAML::Key << "edit_mode" << YAML::Value << search.editMode;
    out << YAML::Key << "feedback" << YAML::Value << search.feedback;
    if (search.isaFilter)
        out << YAML::Key << "isa_filter" << YAML::Value << true;
    if (!search.translateScore)
        out << YAML::Key << "translate_score" << YAML::Value << false;
    if (search.translatePerfThreshold != 15)
        out << YAML::Key << "translate_perf_threshold" << YAML::Value << search.translatePerfThreshold;
    if (search.skipPlanning)
        out << YAML::Key << "skip_planning" << YAML::Value << true;
    if (!search.menuStrategy.isEmpty())
        out << YAML::Key << "menu_strategy" << YAML::Value << toStd(search.menuStrategy);
    if (search.exampleRate)
        out << YAML::Key << "example_rate" << YAML::Value << *search.exampleRate;
    out << YAML::Key << "early_stop" << YAML::Value;
    if (search.earlyStop)
        out << *search.earlyStop;
    else
        out << YAML::Null;
    out << YAML::Key << "early_stop_patience" << YAML::Value << search.earlyStopPatience;
    if (search.noiseFloor)
        out << YAML::Key << "noise_floor" << YAML::Value << *search.noiseFloor;
    out << YAML::Key << "schedule" << YAML::Value;
    if (search.schedule.isEmpty())
        out << YAML::Null;
    else
        out << toStd(search.schedule);
    out << YAML::EndMap;

    out << YAML::Key << "budget" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "max_usd" << YAML::Value;
    budget.maxUsd ? out << *budget.maxUsd : out << YAML::Null;
    out << YAML::Key << "max_llm_calls" << YAML::Value;
    budget.maxLlmCalls ? out << static_cast<long long>(*budget.maxLlmCalls) : out << YAML::Null;
    out << YAML::Key << "max_hours" << YAML::Value;
    budget.maxHours ? out << *budget.maxHours : out << YAML::Null;
    out << YAML::EndMap;

    out << YAML::Key << "llm" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "max_answer_bytes" << YAML::Value << static_cast<long long>(llm.maxAnswerBytes);
    out << YAML::Key << "max_prompt_bytes" << YAML::Value << static_cast<long long>(llm.maxPromptBytes);
    out << YAML::Key << "reuse_answers" << YAML::Value << (llm.reuseAcrossRuns ? "across_runs" : "per_run");
    out << YAML::Key << "resend_billed" << YAML::Value << llm.resendBilled;
    out << YAML::Key << "max_tokens" << YAML::Value << llm.maxTokens;
    if (!llm.proxy.isEmpty())
        out << YAML::Key << "proxy" << YAML::Value << toStd(llm.proxy);
    out << YAML::EndMap;

    out << YAML::Key << "evaluation" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "executor" << YAML::Value << toStd(evaluation.executor);
    out << YAML::Key << "parallel_compiles" << YAML::Value;
    evaluation.parallelCompiles == 0 ? out << "auto" : out << evaluation.parallelCompiles;
    out << YAML::Key << "bench_slots" << YAML::Value << evaluation.benchSlots;
    out << YAML::Key << "sandbox" << YAML::Value << toStd(evaluation.sandbox);
    out << YAML::Key << "keep_workdirs" << YAML::Value << evaluation.keepWorkdirs;
    out << YAML::Key << "bench_isolation" << YAML::Value << toStd(evaluation.benchIsolation);
    out << YAML::Key << "profile" << YAML::Value << evaluation.profile;
    if (evaluation.compileOnly)
        out << YAML::Key << "compile_only" << YAML::Value << true;
    if (!evaluation.hosts.isEmpty()) {
        out << YAML::Key << "hosts" << YAML::Value << YAML::BeginSeq;
        for (const RemoteHost &h : evaluation.hosts) {
            out << YAML::Flow << YAML::BeginMap << YAML::Key << "host" << YAML::Value << toStd(h.host);
            if (!h.user.isEmpty())
                out << YAML::Key << "user" << YAML::Value << toStd(h.user);
            out << YAML::Key << "port" << YAML::Value << h.port << YAML::Key << "slots" << YAML::Value << h.slots
                << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    if (evaluation.executor == QLatin1String("ssh")) {
        out << YAML::Key << "ssh" << YAML::Value << YAML::BeginMap;
        if (!evaluation.sshKnownHosts.isEmpty())
            out << YAML::Key << "known_hosts" << YAML::Value << toStd(evaluation.sshKnownHosts);
        if (!evaluation.sshIdentity.isEmpty())
            out << YAML::Key << "identity" << YAML::Value << toStd(evaluation.sshIdentity);
        out << YAML::Key << "connect_timeout_s" << YAML::Value << evaluation.sshConnectTimeoutS << YAML::EndMap;
    }
    if (evaluation.executor != QLatin1String("local")) {
        out << YAML::Key << "remote" << YAML::Value << YAML::BeginMap << YAML::Key << "command" << YAML::Value
            << toStd(evaluation.remoteCommand) << YAML::Key << "workdir" << YAML::Value
            << toStd(evaluation.remoteWorkdir) << YAML::Key << "retries" << YAML::Value << evaluation.remoteRetries
            << YAML::EndMap;
    }
    if (evaluation.executor == QLatin1String("slurm")) {
        out << YAML::Key << "slurm" << YAML::Value << YAML::BeginMap;
        const auto opt = [&out](const char *key, const QString &value) {
            if (!value.isEmpty())
                out << YAML::Key << key << YAML::Value << toStd(value);
        };
        opt("partition", evaluation.slurmPartition);
        opt("gres", evaluation.slurmGres);
        opt("time", evaluation.slurmTime);
        opt("mem", evaluation.slurmMem);
        opt("shared_dir", evaluation.slurmSharedDir);
        out << YAML::Key << "slots" << YAML::Value << evaluation.slurmSlots << YAML::Key << "poll_ms" << YAML::Value
            << evaluation.slurmPollMs << YAML::Key << "batch" << YAML::Value << evaluation.slurmBatch << YAML::Key
            << "batch_wait_ms" << YAML::Value << evaluation.slurmBatchWaitMs << YAML::Key << "cpus" << YAML::Value
            << evaluation.slurmCpus << YAML::EndMap;
    }
    if (!evaluation.placement.isEmpty()) {
        out << YAML::Key << "placement" << YAML::Value << YAML::BeginMap;
        for (auto it = evaluation.placement.cbegin(); it != evaluation.placement.cend(); ++it)
            out << YAML::Key << toStd(it.key()) << YAML::Value << toStd(it.value());
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
    out << YAML::EndMap;
    return QByteArray(out.c_str()) + '\n';
}

} // namespace autocomp
