#include "exchange/autocomp_dir.h"
#include "exchange/autocomp_dir_files.h"
#include "exchange/python_repr.h"
#include "model/code_identity.h"
#include "store/run_store.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QMap>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>

// Reading an Autocomp output directory (one of ours or one Autocomp wrote) into a new run: the layout is described
// in autocomp_dir.h.

namespace autocomp {

bool isAutocompDir(const QString &path)
{
    return QFileInfo(path).isDir() && QFileInfo(QDir(path).filePath(QStringLiteral("candidates-iter-0"))).isDir();
}

namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

struct Importer
{
    Importer(RunStore &s, const QString &path, QString *e) : store(s), dir(path), error(e) {}

    RunStore &store;
    QDir dir;
    QString *error;
    qint64 runId = 0;
    QString metric = QStringLiteral("latency");
    QHash<QString, QString> providerOf; // file model -> provider
    QList<Candidate> created; // everything added, in order (kept current)
    qint64 llmCalls = 0;

    bool fail(const QString &message)
    {
        *error = message;
        return false;
    }

    QString path(const QString &rel) const { return dir.filePath(rel); }

    qint64 addCall(const QString &phase, const QString &model, const QString &prompt, const QString &response,
                   qint64 candidateId)
    {
        LlmCall call;
        call.runId = runId;
        call.candidateId = candidateId;
        call.phase = phase;
        call.model = model;
        call.provider = providerOf.value(model);
        call.prompt = prompt;
        call.response = response;
        call.status = QStringLiteral("ok");
        call.createdAt = QDateTime::currentDateTimeUtc();
        const qint64 id = store.addLlmCall(call);
        if (id)
            ++llmCalls;
        return id;
    }

    qint64 add(Candidate c)
    {
        c.runId = runId;
        c.id = store.addCandidate(c);
        if (c.id)
            created << c;
        return c.id;
    }

    // Status, score and metrics from an eval-results JSON object.
    void applyResult(Candidate &c, const QJsonObject &o)
    {
        const bool correct = o.value(QStringLiteral("correct")).toBool();
        double value = NaN;
        for (const QString &key : {metric, QStringLiteral("latency")}) {
            const QJsonValue v = o.value(key);
            if (v.isDouble()) {
                value = v.toDouble();
                break;
            }
            if (v.isObject() && v.toObject().value(QStringLiteral("median")).isDouble()) {
                value = v.toObject().value(QStringLiteral("median")).toDouble();
                break;
            }
        }
        const QString ours = o.value(QStringLiteral("status")).toString();
        if (correct && !std::isnan(value)) {
            c.status = CandidateStatus::Correct;
            c.score = value;
        } else if (!ours.isEmpty() && toString(candidateStatusFromString(ours)) == ours && !correct) {
            c.status = candidateStatusFromString(ours);
        } else if (o.contains(QStringLiteral("compiled")) && !o.value(QStringLiteral("compiled")).toBool(true)) {
            c.status = CandidateStatus::CompileError;
        } else if (correct) {
            c.status = CandidateStatus::Failed;
            c.error = QStringLiteral("correct, but the result has no \"%1\"").arg(metric);
        } else {
            c.status = CandidateStatus::Incorrect;
        }
        QJsonObject metrics = o;
        for (const char *key : {"correct", "stdout", "stderr", "status", "feedback", "compiled"})
            metrics.remove(QLatin1String(key));
        c.metrics = metrics;
        QString text = o.value(QStringLiteral("stderr")).toString().trimmed();
        if (text.isEmpty() && c.status != CandidateStatus::Correct)
            text = o.value(QStringLiteral("stdout")).toString().trimmed();
        if (!text.isEmpty())
            c.error = text.right(4000);
        for (const QJsonValue &f : o.value(QStringLiteral("feedback")).toArray())
            c.feedback << f.toString();
    }

    // Reads candidates-iter-N/ (K order); false on a malformed file. Missing directory: empty list, *present false.
    // Reads a candidate's code file and its evaluation result (a missing result marks it failed) and stores
    // it. 0 (with `error` set) when a file is unreadable or malformed or the store refuses it.
    qint64 addEvaluated(Candidate &c, const QString &codeFile, const QDir &evalDir, const QString &resultName,
                        bool *present, QJsonObject *result)
    {
        const auto code = readText(codeFile, error);
        if (!code)
            return 0;
        c.code = *code;
        const auto parsed = readJsonObject(evalDir.filePath(resultName), error, present);
        if (!parsed)
            return 0;
        *result = *parsed;
        if (*present) {
            applyResult(c, *parsed);
        } else {
            c.status = CandidateStatus::Failed;
            c.error = QStringLiteral("no evaluation result in %1").arg(evalDir.path());
        }
        const qint64 id = add(c);
        if (!id)
            fail(QStringLiteral("%1: cannot store the candidate: %2").arg(codeFile, store.lastError()));
        return id;
    }

    bool readBeam(int n, QList<std::shared_ptr<ReprNode>> *out, bool *present)
    {
        const QDir d(path(QStringLiteral("candidates-iter-%1").arg(n)));
        *present = d.exists();
        if (!*present)
            return true;
        static const QRegularExpression re(QStringLiteral("^candidate_(\\d+)\\.txt$"));
        QMap<int, QString> files;
        for (const QString &name : d.entryList(QDir::Files)) {
            const auto m = re.match(name);
            if (m.hasMatch())
                files.insert(m.captured(1).toInt(), name);
        }
        for (const QString &name : files) {
            const QString file = d.filePath(name);
            const auto text = readText(file, error);
            if (!text)
                return false;
            PyVal value;
            QString why;
            if (!readPythonLiteral(*text, &value, &why))
                return fail(QStringLiteral("%1: not a CodeCandidate repr: %2").arg(file, why));
            auto node = toNode(value, &why);
            if (!node)
                return fail(QStringLiteral("%1: %2").arg(file, why));
            *out << node;
        }
        return true;
    }

    static QString lossy(const QString &code)
    {
        // What Autocomp's own eval(repr(code)) gives back: it escapes quotes only, so escapes in the code are decoded.
        PyVal v;
        QString why;
        const QString literal = QStringLiteral("'''") + QString(code).replace(QLatin1Char('\''), QLatin1String("\\'"))
            + QStringLiteral("'''");
        if (readPythonLiteral(literal, &v, &why) && v.kind == PyVal::Str)
            return v.str;
        return code;
    }

    // The stored candidate a repr node stands for, created when the directory has no other record of it.
    qint64 resolve(const std::shared_ptr<ReprNode> &node, int iteration)
    {
        const qint64 parentId = node->parent ? resolve(node->parent, std::max(0, iteration - 1)) : 0;
        if (node->parent && !parentId)
            return 0;
        // Same parent, code and plan; among equals (identical code happens), the one with the same score first.
        for (int pass = 0; pass < 2; ++pass)
            for (const Candidate &c : std::as_const(created)) {
                if (c.parentId != parentId || (parentId == 0) != (c.origin == CandidateOrigin::Root))
                    continue;
                if (pass == 0
                    && !(c.hasScore() && !std::isnan(node->score)
                         && std::abs(c.score - node->score) <= 1e-9 * std::max(1.0, std::abs(c.score))))
                    continue;
                if (c.code != node->code && lossy(c.code) != node->code)
                    continue;
                if (node->hasPlan && parentId && !c.plan.isEmpty() && c.plan != node->plan
                    && lossy(c.plan) != node->plan)
                    continue;
                return c.id;
            }
        Candidate c;
        c.parentId = parentId;
        c.origin = parentId ? CandidateOrigin::Llm : CandidateOrigin::Root;
        int parentIteration = -1;
        for (const Candidate &p : std::as_const(created))
            if (p.id == parentId)
                parentIteration = p.iteration;
        c.iteration = parentId ? std::max(iteration, parentIteration + 1) : 0;
        c.plan = node->plan;
        c.code = node->code;
        c.planModel = node->planModel;
        c.codeModel = node->codeModel;
        c.feedback = node->hwFeedback;
        if (!std::isnan(node->score) && !std::isinf(node->score)) {
            c.status = CandidateStatus::Correct;
            c.score = node->score;
        } else {
            c.status = CandidateStatus::Incorrect;
        }
        c.error = node->stderrText.right(4000);
        return add(c);
    }

    std::optional<QString> optionalText(const QString &file)
    {
        if (!QFileInfo::exists(file))
            return QString();
        return readText(file, error);
    }

    // One iteration's plans (generated-plans-iter-N/plan_parentP_MODEL_S.txt) and implementations
    // (generated-code-iter-N/impl_P_Q_MODEL_S.txt), as they are read and stored.
    struct PlanFile
    {
        int parent = 0;
        QString model;
        int sample = 0;
        QString file;
    };
    struct ImplFile
    {
        int parent = 0;
        int q = 0;
        QString model;
        int sample = 0;
        QString file;
    };
    struct Iteration
    {
        int n = 0;
        QDir planDir;
        QDir codeDir;
        QDir evalDir;
        QList<PlanFile> plans;
        QList<ImplFile> impls;
        QList<int> qToPlan; // Q -> index in plans
        QStringList chosen; // the plan models in the order that gives Q
        QHash<int, qint64> planCall; // plan index -> call id
        QHash<int, QString> planText;
        QSet<int> implemented; // plan indexes
        QList<Candidate> failedWithOutput; // Autocomp's failed_candidates: wrong, and stdout or stderr to show
    };

    bool importIteration(int n, const QList<qint64> &parents)
    {
        Iteration it;
        it.n = n;
        it.planDir = QDir(path(QStringLiteral("generated-plans-iter-%1").arg(n)));
        it.codeDir = QDir(path(QStringLiteral("generated-code-iter-%1").arg(n)));
        it.evalDir = QDir(path(QStringLiteral("eval-results-iter-%1").arg(n)));
        if (!listIteration(&it, int(parents.size())))
            return false;
        orderPlans(&it);
        if (!storePlans(&it))
            return false;
        orderImpls(&it);
        if (!storeImpls(&it, parents) || !importRepairs(n, it.failedWithOutput))
            return false;
        return storeUnimplementedPlans(it, parents);
    }

    bool listIteration(Iteration *it, int parentCount)
    {
        static const QRegularExpression planRe(QStringLiteral("^plan_parent(\\d+)_(.+)_(\\d+)\\.txt$"));
        for (const QString &name : it->planDir.entryList(QDir::Files, QDir::Name)) {
            const auto m = planRe.match(name);
            if (m.hasMatch())
                it->plans << PlanFile{m.captured(1).toInt(), m.captured(2), m.captured(3).toInt(),
                                      it->planDir.filePath(name)};
        }
        static const QRegularExpression implRe(QStringLiteral("^impl_(\\d+)_(\\d+)_(.+)_(\\d+)\\.txt$"));
        for (const QString &name : it->codeDir.entryList(QDir::Files, QDir::Name)) {
            const auto m = implRe.match(name);
            if (m.hasMatch())
                it->impls << ImplFile{m.captured(1).toInt(), m.captured(2).toInt(), m.captured(3),
                                      m.captured(4).toInt(), it->codeDir.filePath(name)};
        }
        auto checkParent = [&](const QString &file, int parent) {
            if (parent < parentCount)
                return true;
            return fail(QStringLiteral("%1: parent %2 does not exist: candidates-iter-%3 has %4 candidates")
                            .arg(file)
                            .arg(parent)
                            .arg(it->n - 1)
                            .arg(parentCount));
        };
        for (const PlanFile &p : std::as_const(it->plans))
            if (!checkParent(p.file, p.parent))
                return false;
        for (const ImplFile &i : std::as_const(it->impls))
            if (!checkParent(i.file, i.parent))
                return false;
        return true;
    }

    // Q order: model-major (the ensemble's order, which the files do not record: the first order, alphabetical
    // first, under which every implementation's Q points at a plan of its own parent), then parent, then sample.
    static void orderPlans(Iteration *it)
    {
        const QList<PlanFile> &plans = it->plans;
        QStringList models;
        for (const PlanFile &p : plans)
            if (!models.contains(p.model))
                models << p.model;
        models.sort();
        auto order = [&](const QStringList &modelOrder) {
            QList<int> q;
            for (const QString &m : modelOrder) {
                QList<int> mine;
                for (int i = 0; i < plans.size(); ++i)
                    if (plans[i].model == m)
                        mine << i;
                std::sort(mine.begin(), mine.end(), [&](int a, int b) {
                    return std::tie(plans[a].parent, plans[a].sample) < std::tie(plans[b].parent, plans[b].sample);
                });
                q << mine;
            }
            return q;
        };
        it->qToPlan = order(models);
        it->chosen = models;
        if (models.size() > 1 && models.size() <= 6) {
            QStringList perm = models;
            do {
                const QList<int> candidate = order(perm);
                bool consistent = true;
                for (const ImplFile &i : std::as_const(it->impls))
                    consistent = consistent && i.q < candidate.size() && plans[candidate[i.q]].parent == i.parent;
                if (consistent) {
                    it->qToPlan = candidate;
                    it->chosen = perm;
                    break;
                }
            } while (std::next_permutation(perm.begin(), perm.end()));
        }
    }

    // Plans become plan calls; their text goes to each implementation.
    bool storePlans(Iteration *it)
    {
        for (int i = 0; i < it->plans.size(); ++i) {
            const PlanFile &p = it->plans[i];
            const auto text = readText(p.file, error);
            if (!text)
                return false;
            it->planText.insert(i, *text);
            const QString stem = QStringLiteral("parent%1_%2_").arg(p.parent).arg(p.model);
            auto full = optionalText(
                it->planDir.filePath(QStringLiteral("plan_%1%2_full.txt").arg(stem).arg(p.sample)));
            if (!full)
                return false;
            QString promptFile = it->planDir.filePath(QStringLiteral("prompt_%1%2.txt").arg(stem).arg(p.sample));
            if (!QFileInfo::exists(promptFile))
                promptFile = it->planDir.filePath(QStringLiteral("prompt_%1%2.txt").arg(stem).arg(0));
            auto prompt = optionalText(promptFile);
            if (!prompt)
                return false;
            const qint64 call = addCall(QStringLiteral("plan"), p.model, *prompt, full->isEmpty() ? *text : *full, 0);
            if (!call)
                return fail(QStringLiteral("%1: cannot store the plan call: %2").arg(p.file, store.lastError()));
            it->planCall.insert(i, call);
        }
        return true;
    }

    // I order: code model (same ensemble order as the plans when the models are the same), then Q, then sample.
    static void orderImpls(Iteration *it)
    {
        QStringList codeModels;
        for (const ImplFile &i : std::as_const(it->impls))
            if (!codeModels.contains(i.model))
                codeModels << i.model;
        codeModels.sort();
        {
            QStringList sortedChosen = it->chosen;
            sortedChosen.sort();
            if (sortedChosen == codeModels)
                codeModels = it->chosen;
        }
        std::stable_sort(it->impls.begin(), it->impls.end(), [&](const ImplFile &a, const ImplFile &b) {
            const auto ma = codeModels.indexOf(a.model), mb = codeModels.indexOf(b.model);
            return std::tie(ma, a.q, a.sample) < std::tie(mb, b.q, b.sample);
        });
    }

    bool storeImpls(Iteration *it, const QList<qint64> &parents)
    {
        for (int index = 0; index < it->impls.size(); ++index) {
            const ImplFile &im = it->impls[index];
            const int planIdx = im.q < it->qToPlan.size() && it->plans[it->qToPlan[im.q]].parent == im.parent
                ? it->qToPlan[im.q]
                : -1;
            Candidate c;
            c.parentId = parents.at(im.parent);
            c.iteration = it->n;
            c.origin = CandidateOrigin::Llm;
            c.codeModel = im.model;
            c.sample = im.sample;
            c.planSlot = im.q;
            if (planIdx >= 0) {
                it->implemented.insert(planIdx);
                c.plan = it->planText.value(planIdx);
                c.planModel = it->plans[planIdx].model;
                c.planCallId = it->planCall.value(planIdx);
            }
            bool present = false;
            QJsonObject resultObject;
            const qint64 id = addEvaluated(c, im.file, it->evalDir, QStringLiteral("code_%1_result.txt").arg(index),
                                           &present, &resultObject);
            if (!id)
                return false;
            if (present && !(c.status == CandidateStatus::Correct)
                && (!resultObject.value(QStringLiteral("stdout")).toString().isEmpty()
                    || !resultObject.value(QStringLiteral("stderr")).toString().isEmpty())) {
                c.id = id;
                it->failedWithOutput << c;
            }
            const QString base = QStringLiteral("%1_%2_%3").arg(im.parent).arg(im.q).arg(im.model);
            QString promptFile = it->codeDir.filePath(QStringLiteral("prompt_%1_%2.txt").arg(base).arg(im.sample));
            if (!QFileInfo::exists(promptFile))
                promptFile = it->codeDir.filePath(QStringLiteral("prompt_%1.txt").arg(base));
            auto prompt = optionalText(promptFile);
            auto full = optionalText(
                it->codeDir.filePath(QStringLiteral("impl_%1_%2_full.txt").arg(base).arg(im.sample)));
            if (!prompt || !full)
                return false;
            if (!addCall(QStringLiteral("code"), im.model, *prompt, full->isEmpty() ? c.code : *full, id))
                return fail(QStringLiteral("%1: cannot store the code call: %2").arg(im.file, store.lastError()));
        }
        return true;
    }

    // Plans nobody implemented (the run stopped, or the code request failed) stay visible.
    bool storeUnimplementedPlans(const Iteration &it, const QList<qint64> &parents)
    {
        for (int i = 0; i < it.plans.size(); ++i) {
            if (it.implemented.contains(i))
                continue;
            Candidate c;
            c.parentId = parents.at(it.plans[i].parent);
            c.iteration = it.n;
            c.origin = CandidateOrigin::Llm;
            c.plan = it.planText.value(i);
            c.planModel = it.plans[i].model;
            c.planCallId = it.planCall.value(i);
            c.planSlot = int(it.qToPlan.indexOf(i));
            c.status = CandidateStatus::Failed;
            c.error = QStringLiteral("no implementation of this plan in %1").arg(it.codeDir.path());
            if (!add(c))
                return fail(
                    QStringLiteral("%1: cannot store the candidate: %2").arg(it.plans[i].file, store.lastError()));
        }
        return true;
    }

    bool importRepairs(int n, const QList<Candidate> &failed)
    {
        const QDir fixDir(path(QStringLiteral("reimplemented-code-iter-%1").arg(n)));
        const QDir evalDir(path(QStringLiteral("eval-reimplemented-results-iter-%1").arg(n)));
        struct Fix
        {
            int k = 0;
            QString model;
            int sample = 0;
            QString file;
        };
        QList<Fix> fixes;
        static const QRegularExpression re(QStringLiteral("^reimplement_failed_(\\d+)_(.+)_(\\d+)\\.txt$"));
        QStringList models;
        for (const QString &name : fixDir.entryList(QDir::Files, QDir::Name)) {
            const auto m = re.match(name);
            if (!m.hasMatch())
                continue;
            fixes << Fix{m.captured(1).toInt(), m.captured(2), m.captured(3).toInt(), fixDir.filePath(name)};
            if (!models.contains(m.captured(2)))
                models << m.captured(2);
        }
        models.sort();
        std::stable_sort(fixes.begin(), fixes.end(), [&](const Fix &a, const Fix &b) {
            const auto ma = models.indexOf(a.model), mb = models.indexOf(b.model);
            return std::tie(ma, a.k, a.sample) < std::tie(mb, b.k, b.sample);
        });
        for (int j = 0; j < fixes.size(); ++j) {
            const Fix &f = fixes[j];
            if (f.k >= failed.size())
                return fail(QStringLiteral("%1: failed implementation %2 does not exist: iteration %3 has %4 failed "
                                           "implementations with output")
                                .arg(f.file)
                                .arg(f.k)
                                .arg(n)
                                .arg(failed.size()));
            const Candidate &broken = failed[f.k];
            Candidate c;
            c.parentId = broken.parentId;
            c.iteration = n;
            c.origin = CandidateOrigin::Fix;
            c.fixOf = broken.id;
            c.plan = broken.plan;
            c.planModel = broken.planModel;
            c.planCallId = broken.planCallId;
            c.planSlot = broken.planSlot;
            c.codeModel = f.model;
            c.sample = f.sample;
            bool present = false;
            QJsonObject result;
            const qint64 id = addEvaluated(c, f.file, evalDir, QStringLiteral("code_%1_result.txt").arg(j), &present,
                                           &result);
            if (!id)
                return false;
            const QString base = QStringLiteral("failed_%1_%2").arg(f.k).arg(f.model);
            auto prompt = optionalText(fixDir.filePath(QStringLiteral("reimplement_prompt_%1.txt").arg(base)));
            auto full = optionalText(
                fixDir.filePath(QStringLiteral("reimplement_%1_%2_full.txt").arg(base).arg(f.sample)));
            if (!prompt || !full)
                return false;
            if (!addCall(QStringLiteral("fix"), f.model, *prompt, full->isEmpty() ? c.code : *full, id))
                return fail(QStringLiteral("%1: cannot store the repair call: %2").arg(f.file, store.lastError()));
        }
        return true;
    }

    qint64 run()
    {
        if (!QFileInfo(dir.path()).isDir()) {
            fail(QStringLiteral("%1: not a directory").arg(dir.path()));
            return 0;
        }
        if (!QFileInfo(path(QStringLiteral("candidates-iter-0"))).isDir()) {
            fail(QStringLiteral("%1: not an Autocomp output directory (no candidates-iter-0/)").arg(dir.path()));
            return 0;
        }
        bool hasMetadata = false;
        const auto metadata = readJsonObject(path(QStringLiteral("run_metadata.json")), error, &hasMetadata);
        if (!metadata)
            return 0;
        const auto runMetrics = readJsonObject(path(QStringLiteral("run_metrics.json")), error);
        if (!runMetrics)
            return 0;
        const QJsonObject ours = metadata->value(QStringLiteral("autocomp_workbench")).toObject();
        if (metadata->value(QStringLiteral("metric")).isString())
            metric = metadata->value(QStringLiteral("metric")).toString();
        for (const char *key : {"plan_models", "code_models"})
            for (const QJsonValue &v : metadata->value(QLatin1String(key)).toArray())
                if (v.toString().contains(QStringLiteral("::")))
                    providerOf.insert(fileModel(v.toString()), v.toString().section(QStringLiteral("::"), 0, 0));

        int last = 0;
        static const QRegularExpression iterRe(
            QStringLiteral("^(?:candidates|generated-plans|generated-code|eval-results)-iter-(\\d+)$"));
        for (const QString &name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            const auto m = iterRe.match(name);
            if (m.hasMatch())
                last = std::max(last, m.captured(1).toInt());
        }

        RunInfo info;
        const QString dirName = QFileInfo(QDir::cleanPath(dir.absolutePath())).fileName();
        static const QRegularExpression nameRe(QStringLiteral("^(.+?)_(.+)_(\\d+)_(?:beam|exhaustive)_iters\\d+"));
        const auto nm = nameRe.match(dirName);
        info.target = ours.value(QStringLiteral("target")).toString();
        info.problem = ours.value(QStringLiteral("problem")).toString();
        if (info.target.isEmpty())
            info.target = nm.hasMatch() ? nm.captured(1) : QStringLiteral("autocomp");
        if (info.problem.isEmpty()) {
            const QString p = metadata->value(QStringLiteral("problem")).toString();
            info.problem = !p.isEmpty() ? p
                : nm.hasMatch()         ? nm.captured(2) + QLatin1Char('_') + nm.captured(3)
                                        : dirName;
        }
        info.agent = ours.value(QStringLiteral("agent")).toString();
        info.configYaml = ours.value(QStringLiteral("config_yaml")).toString();
        info.metric = ours.value(QStringLiteral("metric")).toString(metric);
        info.metricUnit = ours.value(QStringLiteral("unit")).toString();
        info.state = RunState::Finished;
        info.label = QStringLiteral("imported from Autocomp output %1").arg(QDir::cleanPath(dir.absolutePath()));
        info.createdAt = QDateTime::currentDateTimeUtc();
        info.iteration = last;
        info.tokensIn = runMetrics->value(QStringLiteral("total_input_tokens")).toInteger();
        info.tokensOut = runMetrics->value(QStringLiteral("total_output_tokens")).toInteger();
        info.usd = ours.value(QStringLiteral("usd")).toDouble();
        for (const QJsonValue &v : ours.value(QStringLiteral("schedule")).toArray())
            info.schedule << v.toString();
        runId = store.createRun(info);
        if (!runId) {
            fail(QStringLiteral("%1: cannot store the run: %2").arg(dir.path(), store.lastError()));
            return 0;
        }
        info.id = runId;
        if (!importAll(last)) {
            store.deleteRun(runId);
            return 0;
        }

        // Steps that changed nothing (the same code as an earlier candidate) say so.
        for (const Candidate &c : flagIdenticalCode(store.candidates(runId)))
            if (!store.updateCandidate(c)) {
                fail(QStringLiteral("%1: cannot store candidate %2: %3")
                         .arg(dir.path())
                         .arg(c.id)
                         .arg(store.lastError()));
                store.deleteRun(runId);
                return 0;
            }
        // Totals and the best.
        const QList<Candidate> all = store.candidates(runId);
        std::optional<Candidate> best;
        for (const Candidate &c : all) {
            if (c.origin == CandidateOrigin::Root && c.hasScore() && info.baselineScore == 0)
                info.baselineScore = c.score;
            if (c.status == CandidateStatus::Correct && c.hasScore() && (!best || c.score < best->score))
                best = c;
        }
        if (best) {
            info.bestScore = best->score;
            info.bestCandidateId = best->id;
        }
        info.llmCalls = llmCalls;
        if (!store.updateRun(info)) {
            fail(QStringLiteral("%1: cannot store the run: %2").arg(dir.path(), store.lastError()));
            store.deleteRun(runId);
            return 0;
        }
        return runId;
    }

    bool importAll(int last)
    {
        QList<std::shared_ptr<ReprNode>> nodes;
        bool present = false;
        if (!readBeam(0, &nodes, &present))
            return false;
        if (nodes.isEmpty())
            return fail(QStringLiteral("%1: no candidate_K.txt").arg(path(QStringLiteral("candidates-iter-0"))));
        QList<qint64> beam;
        for (int k = 0; k < nodes.size(); ++k) {
            const qint64 id = resolve(nodes[k], 0);
            if (!id)
                return fail(
                    QStringLiteral("%1: cannot store the candidate: %2")
                        .arg(path(QStringLiteral("candidates-iter-0/candidate_%1.txt").arg(k)), store.lastError()));
            beam << id;
        }
        // The original code's evaluation, when there is one.
        for (int k = 0; k < beam.size(); ++k) {
            const QString file = path(QStringLiteral("eval-results-iter-0/code_%1_result.txt").arg(k));
            bool has = false;
            const auto result = readJsonObject(file, error, &has);
            if (!result)
                return false;
            if (!has)
                continue;
            for (Candidate &c : created)
                if (c.id == beam[k] && c.origin == CandidateOrigin::Root) {
                    const double keep = c.score;
                    applyResult(c, *result);
                    if (!c.hasScore())
                        c.score = keep;
                    if (!store.updateCandidate(c))
                        return fail(QStringLiteral("%1: cannot store the result: %2").arg(file, store.lastError()));
                }
        }
        for (int n = 1; n <= last; ++n) {
            if (!importIteration(n, beam))
                return false;
            nodes.clear();
            if (!readBeam(n, &nodes, &present))
                return false;
            if (!present || nodes.isEmpty())
                continue; // Autocomp goes on from the last beam it has
            QList<qint64> next;
            for (int k = 0; k < nodes.size(); ++k) {
                const qint64 id = resolve(nodes[k], n);
                if (!id)
                    return fail(QStringLiteral("%1: cannot store the candidate: %2")
                                    .arg(path(QStringLiteral("candidates-iter-%1/candidate_%2.txt").arg(n).arg(k)),
                                         store.lastError()));
                next << id;
            }
            beam = next;
        }
        if (!store.setBeam(runId, beam))
            return fail(QStringLiteral("%1: cannot store the beam: %2").arg(dir.path(), store.lastError()));
        return true;
    }
};

} // namespace

qint64 importAutocompDir(RunStore &store, const QString &dirPath, QString *error)
{
    // One transaction: an import that fails or is killed halfway leaves nothing behind.
    Importer importer(store, dirPath, error);
    if (!store.beginBatch()) {
        store.endBatch(false);
        if (error)
            *error = QStringLiteral("%1: cannot import: %2").arg(dirPath, store.lastError());
        return 0;
    }
    const qint64 runId = importer.run();
    if (!store.endBatch(runId != 0)) {
        if (runId && error)
            *error = QStringLiteral("%1: cannot import: %2; nothing was imported").arg(dirPath, store.lastError());
        return 0;
    }
    return runId;
}

} // namespace autocomp
